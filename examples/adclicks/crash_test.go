package adclicks_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/adclicks"
	"github.com/pipegen/pipegen/internal/crashtest"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
const defaultSeed = 20261202

// rates slow the generator down so that a run lasts about 3 s.
var rates = []string{"sources.events.rate=10000"}

// expected computes the job's output without running it, from the
// documented semantics of joins: no record is late (the generator's times
// never go back), so an interval join pairs every impression with every
// click of its user from Skew ms before to Within ms after it (the
// clicks before it wait in the join's buffer), and a window join
// every impression with every click of its user in the same window.
func expected(t *testing.T) (attributed, sameWindow []string) {
	add := func(lines *[]string, v any) {
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		*lines = append(*lines, string(line))
	}
	var impressions, clicks []adclicks.Event
	for seq := uint64(0); ; seq++ {
		e, ok := adclicks.GenerateEvent(seq)
		if !ok {
			break
		}
		if e.Click {
			clicks = append(clicks, e)
		} else {
			impressions = append(impressions, e)
		}
	}
	for _, i := range impressions {
		for _, c := range clicks {
			if i.User != c.User {
				continue
			}
			if d := c.Ms - i.Ms; d >= -adclicks.Skew && d <= adclicks.Within {
				add(&attributed, adclicks.Attribution{User: i.User, Impression: i.Seq, Click: c.Seq, Delay: d})
			}
			if w := i.Ms / adclicks.Window * adclicks.Window; c.Ms/adclicks.Window*adclicks.Window == w {
				add(&sameWindow, adclicks.Pair{User: i.User, Window: w, Impression: i.Seq, Click: c.Seq})
			}
		}
	}
	slices.Sort(attributed)
	slices.Sort(sameWindow)
	return attributed, sameWindow
}

// TestMain loads the example's package once and links each of its
// programs once for all the tests (crashtest.Main): TestCrash and TestRescale build
// the same program on pebble.
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected checks that the independent answer is not a trivial one.
func TestExpected(t *testing.T) {
	attributed, sameWindow := expected(t)
	t.Logf("%d attributions, %d pairs in a window", len(attributed), len(sameWindow))
	if len(attributed) < 5000 || len(sameWindow) < 2000 {
		t.Errorf("%d attributions, %d pairs in a window: want many of each", len(attributed), len(sameWindow))
	}
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on the
// state backends of crashtest.Backends, and checks that both runs commit
// exactly the expected output: the buffered records of both joins survive
// the kills, exactly once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	t.Parallel() // the runs are paced and wait most of their time
	for _, backend := range crashtest.Backends("pebble") {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testCrash(t, backend)
		})
	}
}

func testCrash(t *testing.T, backend string) {
	attributed, sameWindow := expected(t)
	crashtest.Run(t, backend, crashtest.Seed(t, defaultSeed), rates, map[string][]string{"attributed-out": attributed, "same-window-out": sameWindow})
}
