package windows_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/windows"
	"github.com/pipegen/pipegen/internal/crashtest"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/verify"
)

// TestStopDrain stops the windowed count mid-stream with stop --drain:
// its sources stop reading and end event time before the savepoint's
// barrier, so every window of what was read fires and is committed: the
// clicks counted in the committed windows plus the late clicks are every
// click read. With stop --savepoint (no drain) the open windows are not
// emitted, and the same sum falls short: that run shows the check can
// fail.
func TestStopDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	res, err := compile.Generate("pipeline.yaml", compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "windows")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	for _, drain := range []bool{true, false} {
		name := map[bool]string{true: "drain", false: "no-drain"}[drain]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ckpt, evFile := filepath.Join(dir, "checkpoints"), filepath.Join(dir, "events.jsonl")
			out, late := filepath.Join(dir, "out"), filepath.Join(dir, "late")
			// 5000 clicks a second per subtask: the 2M clicks would take
			// minutes, so the stop comes mid-stream.
			args := []string{"stop", "--savepoint", "--checkpoint-dir", ckpt}
			if drain {
				args = []string{"stop", "--drain", "--checkpoint-dir", ckpt}
			}
			crashtest.StopMidway(t, bin, []string{"run", "--quiet", "--checkpoint-dir", ckpt,
				"--set", "sinks.out.path=" + out, "--set", "sinks.late.path=" + late,
				"--set", "sources.clicks.rate=5000", "--set", "checkpoint.interval=200ms"}, nil, evFile, args)

			evs, err := events.ReadFile(evFile)
			if err != nil {
				t.Fatal(err)
			}
			var read int64 = -1
			for _, e := range evs {
				if e.Kind == events.Stop {
					read = e.Records
				}
			}
			if read <= 0 || read >= int64(windows.Clicks) {
				t.Fatalf("the stop event says %d clicks were read, want some of the %d", read, windows.Clicks)
			}
			counted := int64(0)
			lines, err := verify.ReadCommitted(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lines {
				var c windows.UserCount
				if err := json.Unmarshal([]byte(l), &c); err != nil {
					t.Fatalf("%s: %q: %v", out, l, err)
				}
				counted += c.Clicks
			}
			lateLines, err := verify.ReadCommitted(late)
			if err != nil {
				t.Fatal(err)
			}
			got := counted + int64(len(lateLines))
			t.Logf("%s: %d clicks read, %d in %d committed windows, %d late", args[1], read, counted, len(lines), len(lateLines))
			switch {
			case drain && got != read:
				t.Errorf("after stop --drain the committed windows and late clicks hold %d clicks, want every one of the %d read", got, read)
			case !drain && got >= read:
				t.Errorf("after stop --savepoint without drain the committed output holds %d of %d clicks read: the open windows should not have fired", got, read)
			}
		})
	}
}
