package crash

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/internal/crashtest"
	"github.com/pipegen/pipegen/verify"
)

// TestSavepointOfSlices stops q5 (q5.yaml), whose sliding windows are
// kept in slices on the memory backend, with a savepoint in the middle of
// its input, and resumes from the savepoint: the same program, which
// keeps the restored windows whole beside its new slices until they
// fire, and the program of the pebble backend, which keeps every window
// whole (a savepoint holds windows whole, as every backend reads them).
// Each time the output committed by both runs together is the
// reference's, each line once.
func TestSavepointOfSlices(t *testing.T) {
	if testing.Short() {
		t.Skip("builds q5 twice and runs it")
	}
	t.Parallel()
	want, env := reference(t, "q5", nexmark.Config{Events: 100_000, Rate: 1000, Seed: 15}, 40)

	bins := map[string]string{}
	for _, backend := range []string{"memory", "pebble"} {
		res, err := compile.Generate("q5.yaml", compile.Options{StateBackend: backend})
		if err != nil {
			t.Fatal(err)
		}
		var src string
		for _, f := range res.Files {
			src += string(f.Content)
		}
		if sliced := strings.Contains(src, "kept in slices of 2s"); sliced != (backend == "memory") {
			t.Fatalf("on the %s backend the windows are kept in slices: %v", backend, sliced)
		}
		bins[backend] = filepath.Join(t.TempDir(), "q5-"+backend)
		if err := res.Build(bins[backend]); err != nil {
			t.Fatal(err)
		}
	}
	for _, to := range []string{"memory", "pebble"} {
		t.Run("to-"+to, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			sp := stopWithSavepoint(t, bins["memory"], env, dir, out, len(want))
			resume := exec.Command(bins[to], "run", "--quiet", "--from-savepoint", sp, "--checkpoint-dir", filepath.Join(dir, "c2"),
				"--set", "sinks.out.path="+out, "--set", "checkpoint.interval=50ms")
			resume.Env = append(os.Environ(), env...)
			if log, err := resume.CombinedOutput(); err != nil {
				t.Fatalf("resuming on %s: %v\n%s", to, err, log)
			}
			got, err := verify.ReadCommitted(out)
			if err != nil {
				t.Fatal(err)
			}
			if d := verify.CompareLines(want, got, 5); !d.Equal() {
				t.Errorf("output of the run stopped with a savepoint and the run resumed from it on %s against the reference: %d lines missing (first %q), %d extra (first %q)",
					to, d.Missing, d.FirstMissing, d.Extra, d.FirstExtra)
			}
		})
	}
}

// stopWithSavepoint runs bin (q5) with its sink at out, at 40,000 events
// a second and a checkpoint every 50 ms, stops it with a savepoint once
// two checkpoints are complete, checks that it had committed some of the
// reference's lines but not all (all is whole), and returns the
// savepoint's folder; env is the generator's settings.
func stopWithSavepoint(t *testing.T, bin string, env []string, dir, out string, all int) string {
	t.Helper()
	ckpt := filepath.Join(dir, "c1")
	sp := crashtest.StopMidway(t, bin, []string{"run", "--quiet", "--checkpoint-dir", ckpt,
		"--set", "sinks.out.path=" + out, "--set", "sources.events.rate=40000", "--set", "checkpoint.interval=50ms"},
		env, filepath.Join(dir, "events.jsonl"), []string{"stop", "--savepoint", "--checkpoint-dir", ckpt})
	if got, err := verify.ReadCommitted(out); err != nil || len(got) == 0 || len(got) >= all {
		t.Fatalf("the job committed %d of the reference's %d lines before the savepoint (%v): want it stopped in the middle", len(got), all, err)
	}
	return sp
}
