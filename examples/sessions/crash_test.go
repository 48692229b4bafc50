package sessions_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/sessions"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/verify"
)

// seedVar names the environment variable that replays a crash test.
const seedVar = "PIPEGEN_CRASH_SEED"

// defaultSeed seeds the kill moments when seedVar is not set.
const defaultSeed = 20261203

// rates slow the generator down so that a run lasts about 2 s.
var rates = []string{"sources.clicks.rate=10000"}

// expected computes the job's output without running it, from the
// documented semantics: the source's watermark is the highest event time
// so far minus the 2s bound minus 1ms, sent every 64 clicks (a source
// with nothing to read may send it sooner, which moves no click across
// the line here: the generator's late clicks are a minute late, the
// others at most 1 s); a click at or before the watermark when it
// arrives is late; a user's other clicks, in time order, make sessions
// that a gap of Gap or more ends; a session of one click is a bounce.
func expected(t *testing.T) (out, bounces, late []string) {
	add := func(lines *[]string, v any) {
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		*lines = append(*lines, string(line))
	}
	byUser := map[string][]sessions.Click{}
	maxTS, wm := int64(math.MinInt64), int64(math.MinInt64)
	for seq := uint64(0); ; seq++ {
		c, ok := sessions.GenerateClick(seq)
		if !ok {
			break
		}
		ts := c.At.UnixMilli()
		if ts <= wm {
			add(&late, c)
		} else {
			byUser[c.User] = append(byUser[c.User], c)
		}
		maxTS = max(maxTS, ts)
		if (seq+1)%64 == 0 && maxTS-2000-1 > wm {
			wm = maxTS - 2000 - 1
		}
	}
	for user, clicks := range byUser {
		slices.SortStableFunc(clicks, func(a, b sessions.Click) int { return a.At.Compare(b.At) })
		var open sessions.Session
		flush := func() {
			if open.Clicks == 1 {
				add(&bounces, open)
			} else if open.Clicks > 1 {
				add(&out, open)
			}
			open = sessions.Session{}
		}
		for _, c := range clicks {
			if open.Clicks > 0 && c.At.Sub(open.Last) >= sessions.Gap {
				flush()
			}
			if open.Clicks == 0 {
				open = sessions.Session{User: user, Start: c.At}
			}
			open.Last = c.At
			open.Clicks++
		}
		flush()
	}
	slices.Sort(out)
	slices.Sort(bounces)
	slices.Sort(late)
	return out, bounces, late
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

// TestExpected checks that the independent answer is not a trivial one.
func TestExpected(t *testing.T) {
	out, bounces, late := expected(t)
	if len(out) < 1000 || len(bounces) < 1000 || len(late) < 100 {
		t.Errorf("%d sessions, %d bounces, %d late clicks: want many of each", len(out), len(bounces), len(late))
	}
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on both
// state backends, and checks that both runs commit exactly the expected
// output: the pending clicks, open sessions and timers of every user, and
// the side outputs, survive the kills, exactly once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	for _, backend := range []string{"memory", "pebble"} {
		t.Run(backend, func(t *testing.T) { testCrash(t, backend) })
	}
}

func testCrash(t *testing.T, backend string) {
	seed := seed(t)
	defer func() {
		if t.Failed() {
			t.Logf("kill moments drawn with seed %d: reproduce with %s=%d go test -count=1 -run TestCrash -v ./examples/sessions (the moments also depend on the machine's speed)", seed, seedVar, seed)
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
	out, bounces, late := expected(t)

	const kills = 6
	rep, err := v.Verify(verify.Options{Kills: kills, Seed: seed, Sets: rates})
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
	if rep.Killed.Kills < kills/2 {
		t.Errorf("only %d kills landed, want at least %d: the job finished too early", rep.Killed.Kills, kills/2)
	}
	if rep.Killed.Resumed == 0 {
		t.Errorf("no restarted process resumed from a checkpoint: the test did not exercise recovery")
	}
	if !rep.Identical() {
		t.Errorf("the killed run's output differs from the clean run's:\n%s", rep)
	}
	for _, run := range []*verify.RunResult{rep.Clean, rep.Killed} {
		diff(t, run.Name+" run, sessions", verify.CompareLines(out, run.Output["out"], 5))
		diff(t, run.Name+" run, bounces", verify.CompareLines(bounces, run.Output["bounces"], 5))
		diff(t, run.Name+" run, late", verify.CompareLines(late, run.Output["late"], 5))
	}
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

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
