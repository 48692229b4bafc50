package runningcount_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/verify"
)

// job is one process of the running count.
type job struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

func start(t *testing.T, bin string, args ...string) *job {
	t.Helper()
	j := &job{cmd: exec.Command(bin, args...), done: make(chan error, 1)}
	j.cmd.Stderr = &j.stderr
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { j.done <- j.cmd.Wait() }()
	return j
}

// wait returns the job's exit code once it ends.
func (j *job) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-j.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(2 * time.Minute):
		j.cmd.Process.Kill()
		t.Fatalf("the job did not end within 2 minutes\n%s", j.stderr.String())
	}
	return -1
}

func (j *job) kill(t *testing.T) {
	j.cmd.Process.Signal(syscall.SIGKILL)
	j.wait(t)
}

// command runs a command of the program and returns its exit code, its
// standard output's last line and its standard error.
func command(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return code, lines[len(lines)-1], stderr.String()
}

// awaitControl waits until the job serves its control endpoint.
func awaitControl(t *testing.T, j *job, ckpt string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(ckpt, "CONTROL")); err == nil {
			return
		}
		select {
		case err := <-j.done:
			t.Fatalf("the job ended before it served its control endpoint: %v\n%s", err, j.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control file in %s", ckpt)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkSavepoints fails the test unless every savepoint listed in dir (its
// folders not starting with '.') verifies: a killed savepoint leaves at
// most a hidden folder.
func checkSavepoints(t *testing.T, bin, dir string) int {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		n++
		if code, _, stderr := command(t, bin, "savepoint", "inspect", filepath.Join(dir, e.Name())); code != 0 {
			t.Errorf("savepoint %s is listed but does not verify: %s", e.Name(), stderr)
		}
	}
	return n
}

// buildRunningCount builds the running count into a new temporary folder
// and returns the folder and the binary.
func buildRunningCount(t *testing.T) (dir, bin string) {
	t.Helper()
	res, err := compile.Generate("pipeline.yaml", compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "runningcount")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// TestSavepoints drives the running count through its savepoint commands,
// with real processes: a savepoint taken while it runs; a stop at a
// savepoint; a new run from the moved savepoint at another parallelism
// (its generator source rescaled too), SIGKILLed while it takes a
// savepoint, started again with the same command line, SIGKILLed again
// during stop --savepoint, and run to the end at parallelism 1. Every
// listed savepoint verifies, and the committed output is exactly the
// expected one.
func TestSavepoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	dir, bin := buildRunningCount(t)
	rng := rand.New(rand.NewPCG(seed(t), 11))
	out := filepath.Join(dir, "out")
	ckpt1, ckpt2 := filepath.Join(dir, "c1"), filepath.Join(dir, "c2")
	common := []string{"--set", "sinks.out.path=" + out, "--set", rate, "--set", "checkpoint.interval=200ms", "--quiet"}
	runArgs := func(ckpt string, p string, extra ...string) []string {
		return append(append([]string{"run", "--checkpoint-dir", ckpt, "--parallelism", p}, common...), extra...)
	}

	// Version 1, parallelism 2: a savepoint while it runs, then a stop at
	// one in a folder of its own.
	j1 := start(t, bin, runArgs(ckpt1, "2")...)
	awaitControl(t, j1, ckpt1)
	time.Sleep(300 * time.Millisecond)
	code, sp1, stderr := command(t, bin, "savepoint", "--checkpoint-dir", ckpt1)
	if code != 0 || !strings.HasPrefix(sp1, filepath.Join(ckpt1, "savepoints", "savepoint-")) {
		t.Fatalf("savepoint: exit %d, path %q\n%s\njob:\n%s", code, sp1, stderr, j1.stderr.String())
	}
	time.Sleep(200 * time.Millisecond)
	code, sp2, stderr := command(t, bin, "stop", "--savepoint", "--checkpoint-dir", ckpt1, "--savepoint-dir", filepath.Join(dir, "sp"))
	if code != 0 || !strings.HasPrefix(sp2, filepath.Join(dir, "sp", "savepoint-")) {
		t.Fatalf("stop --savepoint: exit %d, path %q\n%s\njob:\n%s", code, sp2, stderr, j1.stderr.String())
	}
	if code := j1.wait(t); code != 0 {
		t.Fatalf("version 1 after stop --savepoint: exit %d\n%s", code, j1.stderr.String())
	}
	if n := checkSavepoints(t, bin, filepath.Join(ckpt1, "savepoints")); n != 1 {
		t.Errorf("%d savepoints in the default folder, want 1", n)
	}
	// Move it: savepoints are relocatable.
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(sp2, moved); err != nil {
		t.Fatal(err)
	}

	// From the moved savepoint at parallelism 5, with a checkpoint
	// directory of its own; killed while it takes a savepoint.
	j2 := start(t, bin, runArgs(ckpt2, "5", "--from-savepoint", moved)...)
	awaitControl(t, j2, ckpt2)
	time.Sleep(200 * time.Millisecond)
	sp := exec.Command(bin, "savepoint", "--checkpoint-dir", ckpt2)
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
	j2.kill(t)
	sp.Wait()
	checkSavepoints(t, bin, filepath.Join(ckpt2, "savepoints"))

	// The same command line again (as an orchestrator restarts it), at
	// parallelism 3: it resumes from its newest checkpoint if one
	// completed, else from the savepoint. Killed during stop --savepoint.
	os.Remove(filepath.Join(ckpt2, "CONTROL")) // a killed job leaves it
	j3 := start(t, bin, runArgs(ckpt2, "3", "--from-savepoint", moved)...)
	awaitControl(t, j3, ckpt2)
	time.Sleep(200 * time.Millisecond)
	stop := exec.Command(bin, "stop", "--savepoint", "--checkpoint-dir", ckpt2)
	if err := stop.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
	j3.kill(t)
	stop.Wait()
	checkSavepoints(t, bin, filepath.Join(ckpt2, "savepoints"))

	// To the end at parallelism 1.
	os.Remove(filepath.Join(ckpt2, "CONTROL"))
	// (As fast as it goes: --set is applied in order, the last one wins.)
	j4 := start(t, bin, runArgs(ckpt2, "1", "--from-savepoint", moved, "--set", "sources.events.rate=0")...)
	if code := j4.wait(t); code != 0 {
		t.Fatalf("the last run: exit %d\n%s", code, j4.stderr.String())
	}
	got, err := verify.ReadCommitted(out)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "output through savepoints, rescales and kills against the expected output", verify.CompareLines(expected(), got, 5))
	checkDump(t, bin, sp1)
	// The savepoints outlive every run.
	for _, p := range []string{sp1, moved} {
		if code, _, stderr := command(t, bin, "savepoint", "inspect", p); code != 0 {
			t.Errorf("savepoint %s: %s", p, stderr)
		}
	}
}

// checkDump dumps the state of "totals" in savepoint sp as JSON lines and
// checks every entry against what the job computes: a key's sum is its
// count times its weight.
func checkDump(t *testing.T, bin, sp string) {
	t.Helper()
	cmd := exec.Command(bin, "savepoint", "inspect", "--dump", "totals", sp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("savepoint inspect --dump: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 100 {
		t.Fatalf("--dump printed %d entries, want one per key seen (most of the 500)", len(lines))
	}
	for _, line := range lines {
		var e struct {
			KeyGroup int
			Key      string
			Value    struct{ Count, Sum int64 }
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("--dump line %q: %v", line, err)
		}
		var k int64
		if _, err := fmt.Sscanf(e.Key, "k%d", &k); err != nil || e.Value.Count < 1 || e.Value.Sum != e.Value.Count*(k%9+1) {
			t.Errorf("--dump line %q: want a key kNNN with sum = count*weight", line)
		}
	}
}
