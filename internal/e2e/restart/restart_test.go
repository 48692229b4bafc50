package restart_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/crashtest"
	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestMain loads the package once and links its program once for all the
// tests (crashtest.Main), each of which builds it.
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

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
	checkSums(t, dir)
}

// checkSums checks that the job in dir committed every running sum of
// every key exactly once.
func checkSums(t *testing.T, dir string) {
	t.Helper()
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

// TestRestartSoak: a job that fails hundreds of times restarts each time
// in its own process from its newest checkpoint, commits every running
// sum exactly once, and keeps nothing of its failed attempts: at the last
// panics the process holds as many goroutines and open files as at the
// first ones, and about the same live heap. (A job that kept its failed
// attempts' sink files open, or their operators reachable from the
// metrics, grew by a descriptor or by some 250 KB a restart: each fails
// this test.)
func TestRestartSoak(t *testing.T) {
	bin := build(t)
	const panics = 300
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "--quiet", "--set", "checkpoint.interval=20ms", "--set", "restart.delay=1ms", "--set", "restart.attempts=0")
	cmd.Dir = dir
	// No collections but the probe's (a file a failed attempt left open
	// would be closed by its finalizer): the job allocates some 250 MB.
	cmd.Env = append(os.Environ(), "PANIC=soak", "SOAK_EVERY=997", "SOAK_PANICS="+strconv.Itoa(panics), "GOGC=off", "GOMEMLIMIT=1GiB")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, tail(stderr.String()))
	}
	if n := strings.Count(stderr.String(), "panic: soak"); n < panics/2 {
		t.Fatalf("%d panics logged, want about %d\n%s", n, panics, tail(stderr.String()))
	}
	checkSums(t, dir)

	data, err := os.ReadFile(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	type probe struct{ n, goroutines, fds, heap int64 }
	probes := make([]probe, panics)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var p probe
		if _, err := fmt.Sscan(line, &p.n, &p.goroutines, &p.fds, &p.heap); err != nil {
			t.Fatalf("probe line %q: %v", line, err)
		}
		if p.n < 1 || p.n > panics || probes[p.n-1].n != 0 {
			t.Fatalf("probe line %q: want one line for each panic, 1 to %d", line, panics)
		}
		probes[p.n-1] = p
	}
	for i, p := range probes {
		if p.n == 0 {
			t.Fatalf("no probe of panic %d", i+1)
		}
	}
	// A leak of one goroutine or descriptor per restart would add about
	// 80 between the panics compared (descriptors between two of the
	// probe's collections), 250 KB of live heap per restart 50 MB.
	median := func(ps []probe) int64 {
		v := make([]int64, len(ps))
		for i, p := range ps {
			v[i] = p.goroutines
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	at := func(n int) probe { return probes[n-1] }
	for _, c := range []struct {
		what        string
		early, late int64
		slack       int64
		panics      int
	}{
		{"goroutines", median(probes[10:40]), median(probes[len(probes)-30:]), 4, 260},
		{"open descriptors", at(10).fds, at(99).fds, 4, 89},
		{"open descriptors", at(110).fds, at(199).fds, 4, 89},
		{"bytes of live heap", at(100).heap, at(300).heap, 8 << 20, 200},
	} {
		t.Logf("%s at a panic: %d early, %d later", c.what, c.early, c.late)
		if c.early < 0 || c.late < 0 {
			t.Fatalf("no %s probed", c.what)
		}
		if c.late > c.early+c.slack {
			t.Errorf("%s grew from %d to %d over %d panics: failed attempts are kept", c.what, c.early, c.late, c.panics)
		}
	}
}

// tail is the end of a long log.
func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}
