package fraud_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/crashtest"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/verify"
)

// TestRescale kills the job at 2 subtasks of check once two checkpoints
// are complete, and resumes it at 3: the third subtask has no broadcast
// state of its own in the checkpoint, and the rules read before it are not
// read again, so it decides right only if it restored subtask 0's copy of
// the rules table. The output must be exactly the expected one.
func TestRescale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	t.Parallel() // beside TestCrash: both wait for paced runs most of their time
	res, err := compile.Generate("pipeline.yaml", compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fraud")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	evFile := filepath.Join(dir, "events.jsonl")
	base := []string{"--quiet", "--checkpoint-dir", filepath.Join(dir, "checkpoints"), "--events", evFile,
		"--set", "checkpoint.interval=100ms", "--set", "sources.payments.parallelism=2"}
	for _, r := range rates {
		base = append(base, "--set", r)
	}
	cmd := exec.Command(bin, append([]string{"run", "--set", "parallelism=2"}, base...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(time.Minute)
	for crashtest.CountEvents(evFile, events.Checkpoint) < 2 {
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("at 2 subtasks: %v before checkpoint 2:\n%s", err, stderr.String())
			}
			t.Skip("the job finished before it could be killed: nothing was rescaled")
		case <-deadline:
			cmd.Process.Kill()
			<-exited
			t.Fatalf("at 2 subtasks: no checkpoint 2 within a minute:\n%s", stderr.String())
		case <-time.After(time.Millisecond):
		}
	}
	cmd.Process.Kill()
	if <-exited == nil {
		t.Skip("the job finished before it could be killed: nothing was rescaled")
	}
	run := exec.Command(bin, append([]string{"run", "--set", "parallelism=3"}, base...)...)
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("resuming at 3 subtasks: %v\n%s", err, out)
	}
	if n := crashtest.CountEvents(evFile, events.Resume); n != 1 {
		t.Fatalf("%d runs resumed from a checkpoint, want 1", n)
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, "accepted", "part-00002-*")); len(parts) == 0 {
		t.Fatalf("no output of subtask 2: the resumed run did not run check at 3 subtasks")
	}
	accepted, rejected, alerts := expected(t)
	for sink, want := range map[string][]string{"accepted": accepted, "rejected": rejected, "alerts": alerts} {
		got := committed(t, filepath.Join(dir, sink))
		if d := verify.CompareLines(want, got, 5); !d.Equal() {
			t.Errorf("sink %s: %d lines missing, %d extra; first missing %q, first extra %q", sink, d.Missing, d.Extra, d.FirstMissing, d.FirstExtra)
		}
	}
}

// committed is the sorted lines of the committed part files of a file
// sink's directory.
func committed(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return lines
}
