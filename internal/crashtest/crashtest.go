// Package crashtest is the crash test that the process examples
// (cardblock, fraud, sessions) share: build the example's pipeline on a
// state backend, run it once without failures and once killed with
// SIGKILL at random moments (package verify), and check that both runs
// commit exactly the output computed without running it.
package crashtest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/dsl"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/verify"
)

// SeedVar names the environment variable that replays a crash test.
const SeedVar = "PIPEGEN_CRASH_SEED"

// BackendsVar names the environment variable that picks the state
// backends of the crash tests: "memory,pebble" runs each on both.
const BackendsVar = "PIPEGEN_CRASH_BACKENDS"

// Backends are the state backends to crash-test on: BackendsVar's, else
// def (make test runs each example on one, the examples together on both:
// every run builds the job anew, which costs more than the run).
func Backends(def ...string) []string {
	if s := os.Getenv(BackendsVar); s != "" {
		return strings.Split(s, ",")
	}
	return def
}

// Kills is the number of SIGKILLs of the killed run.
const Kills = 6

// Seed is the seed of the kill moments: SeedVar's value, else def.
func Seed(t *testing.T, def uint64) uint64 {
	s := os.Getenv(SeedVar)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("%s=%q: want a whole number above 0", SeedVar, s)
	}
	return n
}

// Run crash-tests pipeline.yaml of the current directory on backend with
// the kill moments of seed and the settings sets; want holds the expected
// committed lines of each file sink, sorted.
func Run(t *testing.T, backend string, seed uint64, sets []string, want map[string][]string) {
	t.Helper()
	RunFile(t, "pipeline.yaml", backend, seed, sets, nil, want)
}

// RunFile is Run on the pipeline file of that name in the current
// directory: a pipeline that is not an example of its own (its package
// is another example's) has no pipeline.yaml, which would ask for an
// annotated twin (examples TestTwins). env (KEY=VALUE) is added to the
// environment of every run of the job: unlike t.Setenv it lets tests
// with different settings run in parallel. Its test binary's TestMain
// calls Main, which links each program once for all its tests.
func RunFile(t *testing.T, file, backend string, seed uint64, sets, env []string, want map[string][]string) {
	t.Helper()
	defer func() {
		if t.Failed() {
			wd, _ := os.Getwd()
			t.Logf("kill moments drawn with seed %d: reproduce with %s=%d go test -count=1 -run TestCrash -v in %s (the moments also depend on the machine's speed)", seed, SeedVar, seed, wd)
		}
	}()
	res, err := compile.Generate(file, compile.Options{StateBackend: backend})
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier(res, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v.Log = testLog{t}
	v.Env = env
	rep, err := v.Verify(verify.Options{Kills: Kills, Seed: seed, Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean run %s, killed run %s: %d kills, %d restarts, %d resumed from a checkpoint",
		rep.Clean.Duration, rep.Killed.Duration, rep.Killed.Kills, rep.Killed.Restarts, rep.Killed.Resumed)
	for _, r := range []*verify.RunResult{rep.Clean, rep.Killed} {
		if r.Failures > 0 {
			t.Logf("warning: in the %s run the job failed by itself %d times (the program restarted it); first: %s", r.Name, r.Failures, r.FirstFailure)
		}
	}
	// The kill moments are drawn over the clean run's duration; a busy
	// machine can run the killed run faster, so that the last kills come
	// after the end. Half of them must land.
	if rep.Killed.Kills < Kills/2 {
		t.Errorf("only %d kills landed, want at least %d: the job finished too early", rep.Killed.Kills, Kills/2)
	}
	if rep.Killed.Resumed == 0 {
		t.Errorf("no restarted process resumed from a checkpoint: the test did not exercise recovery")
	}
	if !rep.Identical() {
		t.Errorf("the killed run's output differs from the clean run's:\n%s", rep)
	}
	for _, run := range []*verify.RunResult{rep.Clean, rep.Killed} {
		for sink, lines := range want {
			diff(t, run.Name+" run, sink "+sink, verify.CompareLines(lines, run.Output[sink], 5))
		}
	}
}

// Main runs a test binary's tests (TestMain's m) loading each Go package
// once and linking each program once (dsl.CachePackages,
// compile.ReuseBuilds): for test binaries whose tests compile and build
// the same pipelines many times (examples/nexmark/crash: 15 builds of 7
// programs; internal/e2e/restart: 4 of one). That is one go list of the
// package instead of one per compile, which hashes the whole dependency
// graph (about 0.3 s of CPU), and one link of each program (about 1-2 s).
// A package whose folder's files change is loaded again, but a build is
// reused for the same generated files from the same module whatever the
// user's code: a test that rewrites a package's Go code must change its
// pipeline too (examples/runningcount's TestUpgrade does), or build it
// without Main.
func Main(m *testing.M) {
	dsl.CachePackages()
	stop, err := compile.ReuseBuilds()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func diff(t *testing.T, what string, d verify.LineDiff) {
	t.Helper()
	if d.Equal() {
		return
	}
	t.Errorf("%s: %d lines missing, %d extra", what, d.Missing, d.Extra)
	for _, l := range d.FirstMissing {
		t.Errorf("  missing: %s", l)
	}
	for _, l := range d.FirstExtra {
		t.Errorf("  extra:   %s", l)
	}
}

// testLog writes the verifier's progress lines to the test log.
type testLog struct{ t *testing.T }

var _ io.Writer = testLog{}

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

// CountEvents is the number of events of kind in a program's events file
// (run --events): a test that stops or kills a job after its first
// checkpoints waits for them so. A file not yet written counts none.
func CountEvents(file string, kind events.Kind) int {
	evs, _ := events.ReadFile(file)
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// StopMidway runs bin with run's arguments and --events evFile, waits
// until two checkpoints are complete (so that some windows have closed
// and others are open), runs bin with stop's arguments (a `stop
// --savepoint` or `stop --drain`), waits for the job to end, and returns
// the savepoint folder that stop printed last, which must hold a
// MANIFEST. env (KEY=VALUE) is added to the job's environment.
func StopMidway(t *testing.T, bin string, run, env []string, evFile string, stop []string) string {
	t.Helper()
	job := exec.Command(bin, append(slices.Clone(run), "--events", evFile)...)
	if len(env) > 0 {
		job.Env = append(os.Environ(), env...)
	}
	var jobErr bytes.Buffer
	job.Stderr = &jobErr
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- job.Wait() }()
	defer job.Process.Kill()
	deadline := time.After(time.Minute)
	for CountEvents(evFile, events.Checkpoint) < 2 {
		select {
		case err := <-exited:
			t.Fatalf("the job ended before it was stopped: %v\n%s", err, jobErr.String())
		case <-deadline:
			t.Fatalf("no two checkpoints within a minute\n%s", jobErr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cmd := exec.Command(bin, stop...)
	var stopOut, stopErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stopOut, &stopErr
	what := strings.Join(stop[:min(2, len(stop))], " ")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s\njob:\n%s", what, err, stopErr.String(), jobErr.String())
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the job after %s: %v\n%s", what, err, jobErr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the job did not end within a minute of %s\n%s", what, jobErr.String())
	}
	lines := strings.Split(strings.TrimSpace(stopOut.String()), "\n")
	sp := lines[len(lines)-1]
	if _, err := os.Stat(filepath.Join(sp, "MANIFEST")); err != nil {
		t.Fatalf("the savepoint printed last (%q): %v", sp, err)
	}
	return sp
}
