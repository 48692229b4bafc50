package adclicks_test

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

// TestRescale runs the job on pebble at 2 subtasks, kills it once two
// checkpoints are complete, resumes it at 3, kills it again after two
// more, and resumes it at 1 until its input ends: the buffered records of
// both joins move between subtasks by key-group ranges of the stores
// (2 to 3, 3 to 1), and the output must be exactly the expected one.
func TestRescale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	t.Parallel() // beside TestCrash: both wait for paced runs most of their time
	res, err := compile.Generate("pipeline.yaml", compile.Options{StateBackend: "pebble"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "adclicks")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	run := func(p string, killAfter int) (killed bool) {
		t.Helper()
		evFile := filepath.Join(dir, "events-"+p+".jsonl")
		args := []string{"run", "--quiet", "--checkpoint-dir", filepath.Join(dir, "checkpoints"), "--events", evFile,
			"--set", "checkpoint.interval=100ms", "--set", "parallelism=" + p}
		for _, r := range rates {
			args = append(args, "--set", r)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if killAfter == 0 {
			if err := <-exited; err != nil {
				t.Fatalf("at %s subtasks: %v\n%s", p, err, stderr.String())
			}
			return false
		}
		deadline := time.After(time.Minute)
		for crashtest.CountEvents(evFile, events.Checkpoint) < killAfter {
			if crashtest.CountEvents(evFile, events.Done) > 0 || final(evFile) {
				break // it is finishing: no kill would leave work to resume
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("at %s subtasks: %v before checkpoint %d:\n%s", p, err, killAfter, stderr.String())
				}
				return false
			case <-deadline:
				cmd.Process.Kill()
				<-exited
				t.Fatalf("at %s subtasks: no checkpoint %d within a minute:\n%s", p, killAfter, stderr.String())
			case <-time.After(time.Millisecond):
			}
		}
		cmd.Process.Kill()
		// Killed after its final checkpoint, the job had finished: the
		// next run would find nothing to resume.
		return <-exited != nil && !final(evFile)
	}
	if !run("2", 2) {
		t.Skip("the job finished at 2 subtasks before it could be killed: nothing was rescaled")
	}
	if !run("3", 2) {
		t.Skip("the job finished at 3 subtasks before it could be killed: nothing was rescaled to 1")
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, "attributed", "part-00002-*")); len(parts) == 0 {
		t.Fatalf("no output of subtask 2: the second run did not run the joins at 3 subtasks")
	}
	run("1", 0)
	for _, p := range []string{"3", "1"} {
		if n := crashtest.CountEvents(filepath.Join(dir, "events-"+p+".jsonl"), events.Resume); n != 1 {
			t.Fatalf("the run at %s subtasks resumed %d times from a checkpoint, want 1", p, n)
		}
	}
	attributed, sameWindow := expected(t)
	for sink, want := range map[string][]string{"attributed": attributed, "same-window": sameWindow} {
		got := committed(t, filepath.Join(dir, sink))
		if d := verify.CompareLines(want, got, 5); !d.Equal() {
			t.Errorf("sink %s: %d lines missing, %d extra; first missing %q, first extra %q", sink, d.Missing, d.Extra, d.FirstMissing, d.FirstExtra)
		}
	}
}

// final reports whether the events file has the job's final checkpoint.
func final(file string) bool {
	evs, _ := events.ReadFile(file)
	return slices.ContainsFunc(evs, func(e events.Event) bool { return e.Kind == events.Checkpoint && e.Final })
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
