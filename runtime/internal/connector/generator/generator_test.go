package generator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/fault"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func generatorJob(t testing.TB, p int, rate string) *connectortest.Env {
	options := map[string]string{"generate": "Gen"}
	if rate != "" {
		options["rate"] = rate
	}
	return connectortest.New(t, p, connectortest.SourceNode("gen", "generator", options))
}

// upTo generates seq for seq < n.
func upTo(n uint64) func(uint64) (uint64, bool) {
	return func(seq uint64) (uint64, bool) { return seq, seq < n }
}

func TestGeneratorInterleavesSubtasks(t *testing.T) {
	cases := []struct {
		p    int
		n    uint64
		want [][]uint64
	}{
		{1, 4, [][]uint64{{0, 1, 2, 3}}},
		// Blocks of 1, 2, 4, ... numbers in turn: 0 1 2 | 34 56 78 |
		// 9-12 13-16 17-20 | 21-28 ...
		{3, 10, [][]uint64{{0, 3, 4, 9}, {1, 5, 6}, {2, 7, 8}}},
		{3, 25, [][]uint64{{0, 3, 4, 9, 10, 11, 12, 21, 22, 23, 24}, {1, 5, 6, 13, 14, 15, 16}, {2, 7, 8, 17, 18, 19, 20}}},
		{3, 2, [][]uint64{{0}, {1}, nil}},
		{2, 0, [][]uint64{nil, nil}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("p=%d n=%d", c.p, c.n), func(t *testing.T) {
			j := generatorJob(t, c.p, "")
			for sub := range c.p {
				g := NewSource(j, 0, sub, upTo(c.n))
				if got := connectortest.ReadAll[uint64](g); !slices.Equal(got, c.want[sub]) {
					t.Errorf("subtask %d: got %v, want %v", sub, got, c.want[sub])
				}
				if _, ok := g.Next(); ok || !g.Done() {
					t.Errorf("subtask %d: not done after the end", sub)
				}
			}
			if got := j.Ckpt().RecordsRead(); got != int64(c.n) {
				t.Errorf("progress counted %d records, want %d", got, c.n)
			}
		})
	}
}

func TestGeneratorSeq(t *testing.T) {
	j := generatorJob(t, 3, "")
	g := NewSource(j, 0, 1, upTo(100))
	for range 5 {
		g.Next() // 1, 5, 6, 13, 14
	}
	if g.Seq() != 15 {
		t.Fatalf("seq after 5 records of subtask 1 of 3: %d, want 15", g.Seq())
	}
	g2 := NewSource(j, 0, 1, upTo(100))
	g2.SetSeq(g.Seq())
	want := connectortest.ReadAll[uint64](g)
	if got := connectortest.ReadAll[uint64](g2); !slices.Equal(got, want) || got[0] != 15 {
		t.Errorf("resumed at %d: got %v, want %v", g.Seq(), got, want)
	}
}

func TestGeneratorRate(t *testing.T) {
	const rate, n = 200, 21 // one record every 5ms: 100ms for 21 records
	j := generatorJob(t, 2, fmt.Sprint(rate))
	g := NewSource(j, 0, 1, upTo(1000))
	start := time.Now()
	var got []uint64
	for len(got) < n {
		if rec, ok := g.Next(); ok {
			got = append(got, rec)
		} else if g.Done() {
			break
		}
	}
	elapsed := time.Since(start)
	if len(got) != n {
		t.Fatalf("got %d records, want %d", len(got), n)
	}
	if min := time.Duration(n-1) * time.Second / rate; elapsed < min {
		t.Errorf("%d records at %d/s took %v, want at least %v", n, rate, elapsed, min)
	}

	// A slow rate: Next comes back within about 10ms without a record, so
	// the loop can flush and take barriers.
	j = generatorJob(t, 1, "2")
	g = NewSource(j, 0, 0, upTo(10))
	if _, ok := g.Next(); !ok {
		t.Fatal("first record not produced at once")
	}
	start = time.Now()
	if _, ok := g.Next(); ok || g.Done() {
		t.Fatalf("second record at 2/s: got ok=%v done=%v, want no record yet", ok, g.Done())
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("Next waited %v for a record that is not due", d)
	}
}

func TestGeneratorBadRate(t *testing.T) {
	j := generatorJob(t, 1, "fast")
	err := connectortest.Catch(func() { NewSource(j, 0, 0, upTo(1)) })
	if err == nil || !strings.Contains(err.Error(), `sources.gen: rate wants a number`) {
		t.Errorf("got %v", err)
	}
}

func TestGeneratorStopsWhenJobFails(t *testing.T) {
	j := generatorJob(t, 1, "")
	g := NewSource(j, 0, 0, upTo(1<<62))
	j.Cancel(fmt.Errorf("elsewhere"))
	n := 0
	err := connectortest.Catch(func() {
		for {
			g.Next()
			n++
		}
	})
	if err != fault.ErrCanceled || n > connector.CountEvery {
		t.Errorf("ran %d records and got %v, want to stop with %v", n, err, fault.ErrCanceled)
	}
}

// TestGeneratorDrain: once the job drains, a source stops reading within
// connector.CountEvery records (it looks then, not at every record), or
// at its next wait with a rate, and reports that it is done.
func TestGeneratorDrain(t *testing.T) {
	for _, rate := range []string{"", "2000"} {
		t.Run("rate="+rate, func(t *testing.T) {
			j := generatorJob(t, 1, rate)
			defer j.Cancel(fault.ErrCanceled)
			s := NewSource(j, 0, 0, upTo(1<<40))
			var rec uint64
			for range 10 {
				for !s.NextInto(&rec) {
				}
			}
			if s.Done() {
				t.Fatal("done before the drain")
			}
			j.Ckpt().RequestSavepoint(t.TempDir(), true, true)
			if !s.Done() {
				t.Fatal("not done once the job drains")
			}
			more := 0
			for range 10 * connector.CountEvery {
				if s.NextInto(&rec) {
					more++
				} else if s.drained {
					break
				}
			}
			if !s.drained {
				t.Fatal("the source did not see the drain")
			}
			if more > connector.CountEvery {
				t.Errorf("read %d records after the drain, want at most %d", more, connector.CountEvery)
			}
			for range 3 {
				if s.NextInto(&rec) {
					t.Fatal("a record after the drain was seen")
				}
			}
			// The stop event reports this count: every record read.
			if got := j.Ckpt().RecordsRead(); got != int64(10+more) {
				t.Errorf("%d records counted, %d read", got, 10+more)
			}
		})
	}
}

// readRun reads up to limit records as a generated chain does: a run from
// TakeRun, the function called for each of its numbers after At, TookRun
// for those that gave a record in pieces of random sizes (as a barrier
// in the middle of a run has it), NoRecord for a number without one,
// which ends the run. more is false when the source had no run.
func readRun(s *Source[uint64], rng *rand.Rand, limit int) (got []uint64, more bool) {
	seq, n := s.TakeRun()
	if n == 0 {
		return nil, false
	}
	took := uint64(0)
	for ; n > 0 && len(got) < limit; n-- {
		s.At(seq)
		r, ok := s.fn(seq)
		if !ok {
			s.TookRun(took)
			s.NoRecord()
			return got, true
		}
		got = append(got, r)
		seq++
		if took++; rng.IntN(8) == 0 {
			s.TookRun(took)
			took = 0
		}
	}
	s.TookRun(took)
	return got, true
}

// TestGeneratorRuns reads every subtask in runs (readRun) and checks that
// it gets the records Next gives, in order, that the progress count has
// every record, and that a run stops at the progress count's turn.
func TestGeneratorRuns(t *testing.T) {
	const n = 5*connector.CountEvery + 77
	rng := rand.New(rand.NewPCG(1, 2))
	j := generatorJob(t, 3, "")
	jn := generatorJob(t, 3, "")
	for sub := range 3 {
		g := NewSource(j, 0, sub, upTo(n))
		var got []uint64
		for {
			if seq, n := g.TakeRun(); n > 0 && uint64(g.uncounted)+n > connector.CountEvery {
				t.Fatalf("subtask %d: a run of %d from %d with %d records uncounted goes past the count's turn", sub, n, seq, g.uncounted)
			}
			rec, more := readRun(g, rng, 1+rng.IntN(3000))
			got = append(got, rec...)
			if !more {
				break
			}
		}
		want := connectortest.ReadAll[uint64](NewSource(jn, 0, sub, upTo(n)))
		if !slices.Equal(got, want) {
			t.Errorf("subtask %d: %d records in runs, %d by Next; first difference at %d", sub, len(got), len(want), mismatch(got, want))
		}
		if !g.Done() {
			t.Errorf("subtask %d: not done after the end", sub)
		}
	}
	if got := j.Ckpt().RecordsRead(); got != n {
		t.Errorf("progress counted %d records, want %d", got, n)
	}
}

// mismatch is the first index where a and b differ.
func mismatch(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
