package joins_test

import (
	"cmp"
	"encoding/json"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/examples/sessions/joins"
	"github.com/pipegen/pipegen/internal/crashtest"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// defaultSeed seeds the kill moments when crashtest.SeedVar is not set:
// with it most restarts resume from a checkpoint (with some seeds only one
// does, on a quiet machine).
const defaultSeed = 3

// record is a click or a purchase of the model.
type record struct {
	ms  int64
	seq uint64
	buy bool
}

// expected computes the job's output without running it, from the
// documented semantics of window joins on sessions: every record opens a
// window [t, t+Gap) of its user, and windows that overlap or touch are
// one session, whichever side they come from and in whatever order they
// arrive; every pair of a click and a purchase of one session is emitted
// once, when the session fires or, for a record that comes after the
// session fired, within its allowed lateness, at the next watermark. No
// record is late: each is at most Jitter earlier than its place, less
// than the sources' bound of 2s, so a record is after its input's
// watermark, and a session dropped at its end plus the lateness ends
// before any record to come. So the sessions are those of all the records
// and nothing goes to the side outputs. merges counts the records that,
// in the order clicks then purchases (one order the join may see), merge
// two sessions or more.
func expected(t *testing.T) (out []string, merges int) {
	gap := joins.Gap.Milliseconds()
	byUser := map[string][]record{}
	for seq := uint64(0); ; seq++ {
		c, ok := joins.GenerateClick(seq)
		if !ok {
			break
		}
		byUser[c.User] = append(byUser[c.User], record{c.At.UnixMilli(), c.Seq, false})
	}
	for seq := uint64(0); ; seq++ {
		b, ok := joins.GenerateBuy(seq)
		if !ok {
			break
		}
		byUser[b.User] = append(byUser[b.User], record{b.At.UnixMilli(), b.Seq, true})
	}
	for user, recs := range byUser {
		var open [][2]int64
		for _, r := range recs {
			lo, hi, n := r.ms, r.ms+gap, 0
			open = slices.DeleteFunc(open, func(s [2]int64) bool {
				if s[0] <= hi && lo <= s[1] {
					lo, hi = min(lo, s[0]), max(hi, s[1])
					n++
					return true
				}
				return false
			})
			if n >= 2 {
				merges++
			}
			open = append(open, [2]int64{lo, hi})
		}
		slices.SortStableFunc(recs, func(a, b record) int { return cmp.Compare(a.ms, b.ms) })
		for i := 0; i < len(recs); {
			j, end := i+1, recs[i].ms+gap
			for j < len(recs) && recs[j].ms <= end {
				end = max(end, recs[j].ms+gap)
				j++
			}
			for _, c := range recs[i:j] {
				for _, b := range recs[i:j] {
					if !c.buy && b.buy {
						line, err := json.Marshal(joins.Attribution{User: user, Click: c.seq, Buy: b.seq})
						if err != nil {
							t.Fatal(err)
						}
						out = append(out, string(line))
					}
				}
			}
			i = j
		}
	}
	slices.Sort(out)
	return out, merges
}

// TestMain loads the package's Go code once and links each program once
// for all the tests (crashtest.Main).
func TestMain(m *testing.M) {
	crashtest.Main(m)
}

// TestExpected checks that the independent answer is not a trivial one:
// many pairs, and records that merge sessions.
func TestExpected(t *testing.T) {
	out, merges := expected(t)
	if len(out) < 10_000 || merges < 100 {
		t.Errorf("%d pairs, %d records merging sessions: want many of each", len(out), merges)
	}
	t.Logf("%d pairs, %d records merging sessions", len(out), merges)
}

// TestCrash builds the job, runs it without failures, then again killing
// it with SIGKILL at random moments and restarting it each time, on the
// state backends of crashtest.Backends, and checks that both runs commit
// exactly the expected pairs and no late record: the open sessions, their
// records and which pairs they have emitted survive the kills, exactly
// once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	for _, backend := range crashtest.Backends("pebble", "memory") {
		t.Run(backend, func(t *testing.T) {
			out, _ := expected(t)
			crashtest.Run(t, backend, crashtest.Seed(t, defaultSeed), nil, map[string][]string{"out": out, "late-clicks": nil, "late-buys": nil})
		})
	}
}
