package cardblock_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/cardblock"
	"github.com/pipegen/pipegen/internal/crashtest"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set.
const defaultSeed = 20261201

// rates slow the generators down (records per second per subtask) so that
// a run lasts about 2 s, both covering about the same event time per
// second: a payments subtask moves 10 ms of event time a record, a blocks
// subtask 400 ms.
var rates = []string{"sources.payments.rate=15000", "sources.blocks.rate=375"}

// expected computes the job's output without running it: a payment is
// rejected, naming the earliest such block, when a block of its card has
// From <= At < Until; else it is accepted.
func expected(t *testing.T) (accepted, rejected []string) {
	byCard := map[string][]cardblock.Block{}
	for seq := uint64(0); ; seq++ {
		b, ok := cardblock.GenerateBlock(seq)
		if !ok {
			break
		}
		byCard[b.Card] = append(byCard[b.Card], b)
	}
	for seq := uint64(0); ; seq++ {
		p, ok := cardblock.GeneratePayment(seq)
		if !ok {
			break
		}
		blocked := -1
		for i, b := range byCard[p.Card] { // in order of Seq
			if !p.At.Before(b.From) && p.At.Before(b.Until) {
				blocked = i
				break
			}
		}
		if blocked < 0 {
			accepted = append(accepted, cardblock.Accepted(p))
			continue
		}
		line, err := json.Marshal(cardblock.Rejected{Payment: p, BlockSeq: byCard[p.Card][blocked].Seq})
		if err != nil {
			t.Fatal(err)
		}
		rejected = append(rejected, string(line))
	}
	slices.Sort(accepted)
	slices.Sort(rejected)
	return accepted, rejected
}

// TestMain loads the package's Go code once and links each program once
// for all the tests (crashtest.Main).
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected checks that the independent answer is not a trivial one:
// both outputs have many lines, and rejections come from many blocks.
func TestExpected(t *testing.T) {
	accepted, rejected := expected(t)
	if len(accepted)+len(rejected) != cardblock.Payments {
		t.Fatalf("%d accepted and %d rejected payments, want %d in all", len(accepted), len(rejected), cardblock.Payments)
	}
	if len(rejected) < cardblock.Payments/20 || len(accepted) < cardblock.Payments/2 {
		t.Errorf("%d accepted, %d rejected: the blocks should reject some payments, not most", len(accepted), len(rejected))
	}
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on the
// state backends of crashtest.Backends, and checks that both runs commit
// exactly the expected output: the blocks, the pending payments and the
// timers of every card survive the kills, exactly once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	for _, backend := range crashtest.Backends("memory") {
		t.Run(backend, func(t *testing.T) { testCrash(t, backend) })
	}
}

func testCrash(t *testing.T, backend string) {
	accepted, rejected := expected(t)
	crashtest.Run(t, backend, crashtest.Seed(t, defaultSeed), rates, map[string][]string{"accepted": accepted, "rejected": rejected})
}
