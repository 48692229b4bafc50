package fraud_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/examples/fraud"
	"github.com/pipegen/pipegen/internal/crashtest"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
const defaultSeed = 20261202

// rates slow the generators down (records per second per subtask) so that
// a run lasts about 2 s, both covering about the same event time per
// second: a payments subtask moves 10 ms of event time a record, the one
// rules subtask 1.5 s.
var rates = []string{"sources.payments.rate=15000", "sources.rules.rate=100"}

// expected computes the job's output without running it, payment by
// payment in the order of their times (each has its own millisecond): a
// payment while its card is blocked is rejected; one over the limit of
// the rule of its category in force at its time (the latest rule from then
// or before) is rejected and blocks its card for the rule's BlockFor;
// every other payment is accepted.
func expected(t *testing.T) (accepted, rejected, alerts []string) {
	var rules []fraud.Rule
	for seq := uint64(0); ; seq++ {
		r, ok := fraud.GenerateRule(seq)
		if !ok {
			break
		}
		rules = append(rules, r)
	}
	inForce := func(category string, at time.Time) (fraud.Rule, bool) {
		var best fraud.Rule
		found := false
		for _, r := range rules {
			if r.Category != category || r.From.After(at) {
				continue
			}
			if !found || r.From.After(best.From) || r.From.Equal(best.From) && r.Seq > best.Seq {
				best, found = r, true
			}
		}
		return best, found
	}
	blockedUntil := map[string]time.Time{}
	add := func(lines *[]string, v any) {
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		*lines = append(*lines, string(line))
	}
	for seq := uint64(0); ; seq++ { // in the order of their times
		p, ok := fraud.GeneratePayment(seq)
		if !ok {
			break
		}
		rule, ok := inForce(p.Category, p.At)
		switch {
		case p.At.Before(blockedUntil[p.Card]):
			add(&rejected, fraud.Rejected{Payment: p, Reason: "blocked"})
		case ok && p.Amount > rule.Max:
			until := p.At.Add(rule.BlockFor)
			blockedUntil[p.Card] = until
			add(&rejected, fraud.Rejected{Payment: p, Reason: "over limit"})
			add(&alerts, fraud.Alert{Card: p.Card, Payment: p.Seq, Rule: rule.Seq, Until: until})
		default:
			accepted = append(accepted, fraud.Accepted(p))
		}
	}
	slices.Sort(accepted)
	slices.Sort(rejected)
	slices.Sort(alerts)
	return accepted, rejected, alerts
}

// TestMain loads the example's package once and links each of its
// programs once for all the tests (crashtest.Main): TestCrash and TestRescale build
// the same program on memory.
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected checks that the independent answer is not a trivial one:
// every kind of outcome happens often, and rules change over the run.
func TestExpected(t *testing.T) {
	accepted, rejected, alerts := expected(t)
	if len(accepted)+len(rejected) != fraud.Payments {
		t.Fatalf("%d accepted and %d rejected payments, want %d in all", len(accepted), len(rejected), fraud.Payments)
	}
	blocked := 0
	for _, l := range rejected {
		if strings.Contains(l, `"reason":"blocked"`) {
			blocked++
		}
	}
	if len(accepted) < fraud.Payments/2 || len(alerts) < fraud.Payments/50 || blocked < fraud.Payments/50 {
		t.Errorf("%d accepted, %d rejected (%d while blocked), %d alerts: want most accepted and many of each other", len(accepted), len(rejected), blocked, len(alerts))
	}
	rules := map[string]bool{}
	for _, l := range alerts {
		var a fraud.Alert
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatal(err)
		}
		rules[fmt.Sprint(a.Rule)] = true
	}
	if len(rules) < fraud.Rules/4 {
		t.Errorf("alerts name %d rules, want many of the %d: the rules table should change during the run", len(rules), fraud.Rules)
	}
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on the
// state backends of crashtest.Backends, and checks that both runs commit
// exactly the expected output: the rules table (checkpointed once,
// restored on every subtask), the pending payments, the blocks and the
// timers of every card survive the kills, exactly once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	t.Parallel() // the runs are paced and wait most of their time
	for _, backend := range crashtest.Backends("memory", "pebble") {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testCrash(t, backend)
		})
	}
}

func testCrash(t *testing.T, backend string) {
	accepted, rejected, alerts := expected(t)
	crashtest.Run(t, backend, crashtest.Seed(t, defaultSeed), rates, map[string][]string{"accepted": accepted, "rejected": rejected, "alerts": alerts})
}
