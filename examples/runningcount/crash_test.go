package runningcount_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/runningcount"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/verify"
)

// seedVar names the environment variable that replays a crash test.
const seedVar = "PIPEGEN_CRASH_SEED"

// defaultSeed seeds the kill moments when seedVar is not set.
const defaultSeed = 20260611

// rate slows the generator down (records per second per subtask), so that
// a run lasts about 2 s: long enough for checkpoints to complete between
// kills, which land every few hundred milliseconds.
const rate = "sources.events.rate=50000"

// expected computes the job's output without running it: every key with n
// events gets the lines count 1..n, sum count*weight, weight = index%9+1.
func expected() []string {
	counts := make([]int64, runningcount.Keys)
	for seq := uint64(0); ; seq++ {
		e, ok := runningcount.Generate(seq)
		if !ok {
			break
		}
		counts[e.Key]++
	}
	var lines []string
	for k, n := range counts {
		w := int64(k%9 + 1)
		for c := int64(1); c <= n; c++ {
			lines = append(lines, fmt.Sprintf(`{"key":"k%03d","count":%d,"sum":%d}`, k, c, c*w))
		}
	}
	slices.Sort(lines)
	return lines
}

func seed(t *testing.T) uint64 {
	s := os.Getenv(seedVar)
	if s == "" {
		return defaultSeed
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("%s=%q: want a whole number above 0", seedVar, s)
	}
	return n
}

// duplicates returns the lines that appear more than once in sorted lines.
func duplicates(lines []string) []string {
	var dup []string
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] && (len(dup) == 0 || dup[len(dup)-1] != lines[i]) {
			dup = append(dup, lines[i])
		}
	}
	return dup
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

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, and
// checks that both runs commit exactly the expected output; then once more
// in at-least-once mode, where nothing may be missing.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	t.Parallel() // the runs are paced and wait most of their time
	for _, backend := range []string{"memory", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testCrash(t, backend)
		})
	}
}

// testCrash is TestCrash with the state on backend; the at-least-once
// run is the memory backend's only.
func testCrash(t *testing.T, backend string) {
	seed := seed(t)
	defer func() {
		if t.Failed() {
			t.Logf("kill moments drawn with seed %d: reproduce with %s=%d go test -count=1 -run TestCrash -v ./examples/runningcount (the moments also depend on the machine's speed), or try pipegen verify -seed %d -set %s examples/runningcount/pipeline.yaml",
				seed, seedVar, seed, seed, rate)
		}
	}()
	res, err := compile.Generate("pipeline.yaml", compile.Options{StateBackend: backend})
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier(res, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v.Log = testLog{t}
	want := expected()

	const kills = 6
	rep, err := v.Verify(verify.Options{Kills: kills, Seed: seed, Sets: []string{rate}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean run %s, killed run %s: %d kills, %d restarts, %d resumed from a checkpoint",
		rep.Clean.Duration, rep.Killed.Duration, rep.Killed.Kills, rep.Killed.Restarts, rep.Killed.Resumed)
	failures(t, rep.Clean)
	failures(t, rep.Killed)
	// The kill moments are drawn over the clean run's CPU time; the
	// killed run's processes can do the same work with less (the clean
	// run's checkpoints, its collector), so that the last kills come
	// after the end. Half of them must land.
	if rep.Killed.Kills < kills/2 {
		t.Errorf("only %d kills landed, want at least %d: the job finished too early", rep.Killed.Kills, kills/2)
	}
	if rep.Killed.Resumed == 0 {
		t.Errorf("no restarted process resumed from a checkpoint: the test did not exercise recovery")
	}
	clean, killed := rep.Clean.Output["out"], rep.Killed.Output["out"]
	if !rep.Identical() {
		t.Errorf("the killed run's output differs from the clean run's:\n%s", rep)
	}
	diff(t, "clean run against the expected output", verify.CompareLines(want, clean, 5))
	diff(t, "killed run against the expected output", verify.CompareLines(want, killed, 5))
	if dup := duplicates(killed); len(dup) > 0 {
		t.Errorf("the killed run committed %d lines more than once, first %s", len(dup), dup[0])
	}

	if backend != "memory" {
		return
	}
	// At-least-once: barriers are not aligned, so a replay may duplicate,
	// but every expected line must be there.
	rng := rand.New(rand.NewPCG(seed, 1))
	delays := verify.KillDelays(rng, 5, v.KillSpan(rep.Clean))
	v.Timeout = verify.KilledTimeout(rep.Clean.Duration)
	alo, err := v.RunWithKills("at-least-once", delays, "--set", rate, "--set", "checkpoint.mode=at-least-once",
		"--set", "checkpoint.interval="+rep.Interval.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("at-least-once run %s: %d kills, %d restarts, %d resumed from a checkpoint, %d lines (%d expected)",
		alo.Duration, alo.Kills, alo.Restarts, alo.Resumed, len(alo.Output["out"]), len(want))
	failures(t, alo)
	if alo.Kills < 3 {
		t.Errorf("at-least-once: only %d kills landed, want at least 3 of 5", alo.Kills)
	}
	if d := verify.CompareLines(want, alo.Output["out"], 5); d.Missing > 0 {
		t.Errorf("at-least-once: %d expected lines are missing, first %q", d.Missing, d.FirstMissing)
	}
}

// failures logs the failures of the job that were not kills, after
// which the program restarted it by itself. They are not the test's
// subject (the output must be exact anyway), but they are bugs.
func failures(t *testing.T, r *verify.RunResult) {
	if r.Failures > 0 {
		t.Logf("warning: in the %s run the job failed by itself %d times (the program restarted it); first: %s", r.Name, r.Failures, r.FirstFailure)
	}
}

// testLog writes the verifier's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
