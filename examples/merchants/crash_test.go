package merchants_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/examples/merchants"
	"github.com/pipegen/pipegen/internal/crashtest"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
const defaultSeed = 20261202

// rates slow the generator down so that a run lasts about 2 s.
var rates = []string{"sources.payments.rate=15000"}

// expected computes the job's output without running it, with Go maps.
func expected() []string {
	type card struct {
		payments int
		spend    map[string]merchants.Spend
	}
	cards := map[string]*card{}
	var out []string
	for seq := uint64(0); ; seq++ {
		p, ok := merchants.GeneratePayment(seq)
		if !ok {
			break
		}
		c := cards[p.Card]
		if c == nil {
			c = &card{spend: map[string]merchants.Spend{}}
			cards[p.Card] = c
		}
		if p.Close {
			var first string
			if len(c.spend) > 0 {
				first = slices.Min(slices.Collect(func(yield func(string) bool) {
					for k := range c.spend {
						if !yield(k) {
							return
						}
					}
				}))
			}
			out = append(out, merchants.Closed(p.Card, c.payments, len(c.spend), first))
			delete(cards, p.Card)
			continue
		}
		c.payments++
		s := c.spend[p.Merchant]
		s.Count++
		s.Cents += p.Cents
		c.spend[p.Merchant] = s
		out = append(out, merchants.Line(p.Card, p.Merchant, s))
	}
	slices.Sort(out)
	return out
}

// TestMain loads the package's Go code once and links each program once
// for all the tests (crashtest.Main).
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected: the answer is not a trivial one: merchants come back to
// cards, and cards close with many merchants.
func TestExpected(t *testing.T) {
	out := expected()
	if len(out) != merchants.Payments {
		t.Fatalf("%d lines, want one per payment, %d", len(out), merchants.Payments)
	}
	again, closed := 0, 0
	for _, l := range out {
		switch {
		case strings.Contains(l, "closed"):
			closed++
		case strings.Fields(l)[2] != "1":
			again++
		}
	}
	if closed < 10 || again < merchants.Payments/4 {
		t.Errorf("%d closings and %d payments at a merchant seen before: want many of both", closed, again)
	}
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on the
// state backends of crashtest.Backends, and checks that both runs commit
// exactly the expected output: every card's map entries survive the
// kills, exactly once, and so do its clearings.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	for _, backend := range crashtest.Backends("pebble") {
		t.Run(backend, func(t *testing.T) {
			crashtest.Run(t, backend, crashtest.Seed(t, defaultSeed), rates, map[string][]string{"out": expected()})
		})
	}
}
