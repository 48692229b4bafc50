package golden

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/internal/multicall"
)

// TestGeneratedCodeInlines compiles golden programs with the compiler's
// inlining decisions printed, and checks that the small functions that
// they call per record, per window or per watermark are inlined there,
// not called: the runtime's methods that generated code calls through
// the facade's aliases, and the plain helpers that the program's own
// instances of the runtime's generic methods call. The compiler has
// their bodies only when the package that the program imports carries
// them (runtime/inline.go, golang/go#74783).
func TestGeneratedCodeInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling golden programs is skipped in -short mode")
	}
	cases := []struct {
		program string // a folder of golden/
		where   string // what keeps the bodies
		inlined []string
	}{
		// A file source with event time, windows (sliding, sliced,
		// tumbling, sessions), an interval join, processing-time timers.
		{"eventtime", "runtime.inlineBodies (runtime/inline.go)", []string{
			"checkpoint.(*SourceCtl).Poll",
			"checkpoint.(*SourceCtl).Draining",
			"eventtime.(*Watermarks).Observe",
			"eventtime.(*Watermarks).Pending",
			"eventtime.(*Watermarks).Finish",
			"checkpoint.(*Task).NowMillis",
			"eventtime.Window.MaxTimestamp",
			"metrics.(*Chain).Watermark",
		}},
		{"eventtime", "runtime.genericBodies (runtime/inline.go)", []string{
			"eventtime.floorMultiple", // sliced windows, per record
			"eventtime.aheadOf",
			"eventtime.addSat", // sliding windows, cleanup times
			"eventtime.WindowAssigner.tumbling",
			"eventtime.changedAfter", // the checkpoint writer, per window
			"eventtime.(*seqList).at",
			"eventtime.windowHead",
			"eventtime.subSat",      // the interval join, per record
			"keygroup.Of",           // per record sent by key
			"stream.lastWait.short", // per wait for a batch
		}},
		{"kafka", "kafka.genericBodies (runtime/kafka/inline.go)", []string{
			"kafka.(*part).done",     // the source, per record
			"kafka.(*batch).failure", // the sink, per record
		}},
		// A JSON-lines sink's generated encoder, per integer field:
		// AppendInt is its own, at a cost of 76 against Go's budget of
		// 80 (81 was a second call per number).
		{"wordcount", "its size (runtime/textcodec/itoa.go)", []string{
			"textcodec.AppendInt",
		}},
		{"pebble-joins", "pebblestate.inlineBodies (runtime/pebblestate/inline.go)", []string{
			"eventtime.AddSat",
			"eventtime.SubSat",
		}},
	}
	// One go list -export compiles the programs' packages, in parallel,
	// without linking them, and prints what the compiler printed, even
	// when a compile is in the build cache.
	args := []string{"list", "-export", "-gcflags=-m"}
	for _, c := range cases {
		if pkg := "./" + c.program + "/want"; !slices.Contains(args, pkg) {
			args = append(args, pkg)
		}
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s failed: %v\n%s", strings.Join(args, " "), err, out)
	}
	decisions := multicall.CompilerOutput(string(out))
	for _, c := range cases {
		printed, ok := decisions["github.com/pipegen/pipegen/golden/"+c.program+"/want"]
		if !ok {
			t.Fatalf("go list printed nothing of the compile of golden/%s:\n%s", c.program, out)
		}
		for _, f := range c.inlined {
			if !strings.Contains(printed, "inlining call to "+f+"\n") {
				t.Errorf("golden/%s calls %s instead of inlining it: does %s reach it?", c.program, f, c.where)
			}
		}
	}
}
