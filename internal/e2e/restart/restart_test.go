package restart_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func build(t *testing.T) string {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	res, err := compile.Generate("pipeline.yaml", compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "restart")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

type ev struct{ K, N int64 }

// TestRestartAfterPanic: the job panics once, restarts from its newest
// checkpoint and its committed output is exactly every running sum once.
func TestRestartAfterPanic(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "--set", "checkpoint.interval=20ms", "--set", "restart.delay=10ms")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	log := stderr.String()
	for _, want := range []string{"sums[", "panic: boom", "record: {K:3 N:1}", "restarting in 10ms from the newest checkpoint", "(restart 1 of 3)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	seen := map[ev]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "out", "part-*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var e ev
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			seen[e]++
		}
	}
	// Every key k sees 10000 events: running sums 1..10000, once each.
	if len(seen) != 100000 {
		t.Errorf("%d distinct output records, want 100000", len(seen))
	}
	for e, n := range seen {
		if n != 1 || e.N < 1 || e.N > 10000 || e.K < 0 || e.K > 9 {
			t.Fatalf("output %+v appears %d times", e, n)
		}
	}
}

// TestGiveUp: a job that panics every time gives up after the allowed
// restarts and exits 1 with the panic and the record.
func TestGiveUp(t *testing.T) {
	bin := build(t)
	cmd := exec.Command(bin, "run", "--quiet", "--set", "checkpoint.interval=20ms", "--set", "restart.delay=1ms", "--set", "restart.attempts=2")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PANIC=always")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
	}
	log := stderr.String()
	if n := strings.Count(log, "panic: boom"); n != 3 {
		t.Errorf("%d panics logged, want 3 (the first run and 2 restarts)", n)
	}
	for _, want := range []string{"record: {K:3 N:1}", "giving up: 2 restarts were allowed (restart.attempts)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestGiveUpParallelism1: at parallelism 1 the keyed operator runs in the
// source's goroutine and takes each record by a call, not in a batch
// (runtime.Inbox.Calls), without a recover of its own; its panic still
// names its chain (not the source's, whose goroutine it runs in) and the
// source's record it came from, by its sequence number (Gen(seq) has K 3
// when seq%10 is 3).
func TestGiveUpParallelism1(t *testing.T) {
	bin := build(t)
	cmd := exec.Command(bin, "run", "--quiet", "--parallelism=1", "--set", "checkpoint.interval=20ms", "--set", "restart.delay=1ms", "--set", "restart.attempts=1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PANIC=always")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
	}
	for _, want := range []string{"sums[0]: panic: boom", "from: sources.gen, sequence number 39993\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, stderr.String())
		}
	}
}
