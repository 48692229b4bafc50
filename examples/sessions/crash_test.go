package sessions_test

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/sessions"
	"github.com/pipegen/pipegen/internal/crashtest"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
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

// TestMain loads the package's Go code once and links each program once
// for all the tests (crashtest.Main).
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected checks that the independent answer is not a trivial one.
func TestExpected(t *testing.T) {
	out, bounces, late := expected(t)
	if len(out) < 1000 || len(bounces) < 1000 || len(late) < 100 {
		t.Errorf("%d sessions, %d bounces, %d late clicks: want many of each", len(out), len(bounces), len(late))
	}
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on the
// state backends of crashtest.Backends, and checks that both runs commit
// exactly the expected output: the pending clicks, open sessions and
// timers of every user, and the side outputs, survive the kills, exactly
// once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	for _, backend := range crashtest.Backends("pebble") {
		t.Run(backend, func(t *testing.T) { testCrash(t, backend) })
	}
}

func testCrash(t *testing.T, backend string) {
	out, bounces, late := expected(t)
	crashtest.Run(t, backend, crashtest.Seed(t, defaultSeed), rates, map[string][]string{"out": out, "bounces": bounces, "late": late})
}
