package cardblock_test

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/cardblock"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/verify"
)

// seedVar names the environment variable that replays a crash test.
const seedVar = "PIPEGEN_CRASH_SEED"

// defaultSeed seeds the kill moments when seedVar is not set.
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
// it with SIGKILL at random moments and restarting it each time, on both
// state backends, and checks that both runs commit exactly the expected
// output: the payments, the blocks, the pending payments and the timers
// of every card survive the kills, exactly once.
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
			t.Logf("kill moments drawn with seed %d: reproduce with %s=%d go test -count=1 -run TestCrash -v ./examples/cardblock (the moments also depend on the machine's speed)", seed, seedVar, seed)
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
	accepted, rejected := expected(t)

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
		diff(t, run.Name+" run, accepted", verify.CompareLines(accepted, run.Output["accepted"], 5))
		diff(t, run.Name+" run, rejected", verify.CompareLines(rejected, run.Output["rejected"], 5))
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
