package runningcount_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pipegen/pipegen/internal/syncbuf"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/verify"
)

// TestSIGTERM stops the job with SIGTERM three times, as an orchestrator
// stopping and starting it would, with a checkpoint interval far longer
// than the run: each process must take a checkpoint on the signal, commit
// the output up to it and exit 0 within the stop timeout; the last run
// finishes; the committed output is exactly the expected one. (A second
// signal, and the stop timeout, are tested in runtime/internal/cli.)
func TestSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	dir, bin := buildRunningCount(t)
	out := filepath.Join(dir, "out")
	// The events file tells when a process has started its job: the
	// signal comes that long after, not after the process's start,
	// which on a loaded machine (go test -p 4) took longer than the
	// delay, so that SIGTERM came before the program had asked for it
	// and ended it as the system does (exit -1, no checkpoint).
	evFile := filepath.Join(dir, "events.jsonl")
	args := []string{"run", "--checkpoint-dir", filepath.Join(dir, "checkpoints"), "--set", "sinks.out.path=" + out,
		"--set", rate, "--set", "checkpoint.interval=1h", "--stop-timeout", "10s", "--events", evFile}

	for i, after := range []time.Duration{300 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond} {
		code, stderr, took := runSignalled(t, bin, args, evFile, after, 1)
		if code != 0 || !strings.Contains(stderr, "stopped at checkpoint") {
			t.Fatalf("process %d: exit %d after SIGTERM, want 0 and a stop at a checkpoint; stderr:\n%s", i+1, code, stderr)
		}
		if took > 10*time.Second {
			t.Errorf("process %d: stopped %s after the signal, beyond the 10s stop timeout", i+1, took)
		}
		if i > 0 && !strings.Contains(stderr, "resuming from checkpoint") {
			t.Errorf("process %d did not resume from the checkpoint its predecessor stopped at:\n%s", i+1, stderr)
		}
	}
	code, stderr, _ := runSignalled(t, bin, args, evFile, -1, 0)
	if code != 0 {
		t.Fatalf("the last run: exit %d\n%s", code, stderr)
	}
	got, err := verify.ReadCommitted(out)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "output after three SIGTERMs against the expected output", verify.CompareLines(expected(), got, 5))
}

// runSignalled runs bin with args, sends it n SIGTERMs the delay after
// the process has written its start into the events file (none when the
// delay is negative), and returns its exit code, its standard error and
// how long it ran after the first signal.
func runSignalled(t *testing.T, bin string, args []string, evFile string, after time.Duration, n int) (int, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var signalled time.Time
	if after >= 0 {
		started := func() bool {
			evs, _ := events.ReadFile(evFile)
			return slices.ContainsFunc(evs, func(e events.Event) bool { return e.PID == cmd.Process.Pid && e.Kind == events.Start })
		}
		for deadline := time.Now().Add(time.Minute); !started(); time.Sleep(5 * time.Millisecond) {
			select {
			case err := <-done:
				t.Fatalf("the job ended before it started: %v\n%s", err, stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("the job did not write its start into %s within a minute\n%s", evFile, stderr.String())
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the job ended before the signal: %v\n%s", err, stderr.String())
		case <-time.After(after):
		}
		signalled = time.Now()
		for range n {
			cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the job did not end within a minute\n%s", stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var took time.Duration
	if !signalled.IsZero() {
		took = time.Since(signalled)
	}
	return code, stderr.String(), took
}
