package golden

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGeneratedCodeInlines compiles a golden program (eventtime: a file
// source with event time, windows, processing-time timers) with the
// compiler's inlining decisions printed, and checks that the small
// methods of the runtime's internal types that generated code calls per
// record, per window or per watermark are inlined there, not called: the
// compiler has their bodies only when package runtime carries them
// (runtime/inline.go, golang/go#74783).
func TestGeneratedCodeInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling a golden program is skipped in -short mode")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", "-o", "/dev/null", "./eventtime/want").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m of the eventtime golden program failed: %v\n%s", err, out)
	}
	for _, m := range []string{
		"checkpoint.(*SourceCtl).Poll",
		"eventtime.(*Watermarks).Observe",
		"eventtime.(*Watermarks).Pending",
		"eventtime.(*Watermarks).Finish",
		"checkpoint.(*Task).NowMillis",
		"eventtime.Window.MaxTimestamp",
		"metrics.(*Chain).Watermark",
	} {
		if !strings.Contains(string(out), "inlining call to "+m+"\n") {
			t.Errorf("the generated code of golden/eventtime calls %s instead of inlining it: is it in runtime.inlineBodies (runtime/inline.go)?", m)
		}
	}
}
