package eventtime

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimerHeapOrder pushes and pops timers in random interleavings and
// checks that they come out by (at, seq), against a sorted list.
func TestTimerHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var h timerHeap
		var want []timerEntry
		seq := uint64(0)
		for range r.IntN(3000) {
			if len(h) > 0 && r.IntN(3) == 0 {
				slices.SortFunc(want, cmpEntry)
				if got := h.pop(); got != want[0] {
					t.Fatalf("round %d: pop %+v, want %+v", round, got, want[0])
				}
				want = want[1:]
				continue
			}
			e := timerEntry{at: int64(r.IntN(50)), seq: seq, rec: uint32(seq)}
			seq++
			h.push(e)
			want = append(want, e)
		}
		if round%2 == 0 {
			// Out of order, then init: as compact leaves it.
			r.Shuffle(len(h), func(i, j int) { h[i], h[j] = h[j], h[i] })
			h.init()
		}
		slices.SortFunc(want, cmpEntry)
		for _, w := range want {
			if got := h.pop(); got != w {
				t.Fatalf("round %d: pop %+v, want %+v", round, got, w)
			}
		}
		if len(h) != 0 {
			t.Fatalf("round %d: %d left", round, len(h))
		}
	}
}

// TestTimerHeapOrderLarge fills heaps past cachedHeap, where down takes
// its branch per level, with times on both sides of zero and of the
// int64 range's ends (before flips the sign bit), pops half, fills again
// and pops the rest, against a sorted list.
func TestTimerHeapOrderLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	times := []int64{MinTime, MinTime + 1, -1, 0, 1, MaxTime - 1, MaxTime}
	for _, n := range []int{cachedHeap / 2, cachedHeap + 1, 3 * cachedHeap} {
		var h timerHeap
		var want []timerEntry
		seq := uint64(0)
		add := func(k int) {
			for range k {
				at := int64(r.IntN(200)) - 100
				if r.IntN(50) == 0 {
					at = times[r.IntN(len(times))]
				}
				e := timerEntry{at: at, seq: seq}
				seq++
				h.push(e)
				want = append(want, e)
			}
			slices.SortFunc(want, cmpEntry)
		}
		take := func(k int) {
			for i := range k {
				if got := h.pop(); got != want[i] {
					t.Fatalf("%d timers: pop %d gave %+v, want %+v", n, i, got, want[i])
				}
			}
			want = want[k:]
		}
		add(n)
		take(n / 2)
		add(n)
		take(len(want))
		if len(h) != 0 {
			t.Fatalf("%d timers: %d left", n, len(h))
		}
	}
}

func cmpEntry(a, b timerEntry) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
}

// BenchmarkTimerHeap is Nexmark q4's timers: one set per auction at its
// expiry, a little after now, and every due one run as time passes,
// with about 2,000 pending.
func BenchmarkTimerHeap(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var h timerHeap
	now, seq := int64(0), uint64(0)
	for b.Loop() {
		h.push(timerEntry{at: now + 1 + int64(r.IntN(4000)), seq: seq})
		seq++
		now++
		for len(h) > 0 && h[0].at <= now {
			h.pop()
		}
	}
}

// BenchmarkTimersManyKeys registers a timer for each of a million keys
// at once, as a process operator does when a window of its input's
// results comes in (each key's record of timers and the heap grow with
// them), then runs them.
func BenchmarkTimersManyKeys(b *testing.B) {
	const n = 1 << 20
	for b.Loop() {
		t := NewTimerService[int64]()
		for k := range int64(n) {
			t.Register(k, 1000+k%7, false)
		}
		fired := 0
		t.AdvanceEvent(2000, func(int64, int64) { fired++ })
		if fired != n {
			b.Fatalf("%d timers ran, want %d", fired, n)
		}
	}
}

// TestTimersManyKeys sets timers of keys over several chunks of records
// and a heap that doubles, frees a third of the records and gives them to
// new keys, and checks that every timer runs once, for its key, in order.
func TestTimersManyKeys(t *testing.T) {
	const n = 5*recChunk + 17
	ts := NewTimerService[int64]()
	want := map[int64]int64{}
	for k := range int64(n) {
		ts.Register(k, 100+k%13, false)
		want[k] = 100 + k%13
	}
	for k := int64(0); k < n; k += 3 {
		ts.Delete(k, 100+k%13, false) // the key's record is freed
		delete(want, k)
	}
	for k := int64(n); k < n+n/3; k++ {
		ts.Register(k, 90+k%7, false) // on a freed record
		want[k] = 90 + k%7
	}
	last := int64(0)
	ts.AdvanceEvent(MaxTime, func(k, at int64) {
		if w, ok := want[k]; !ok || w != at || at < last {
			t.Fatalf("timer of key %d at %d ran (want %d, %v; the one before at %d)", k, at, w, ok, last)
		}
		delete(want, k)
		last = at
	})
	if len(want) != 0 || ts.Len() != 0 {
		t.Fatalf("%d timers did not run, %d left", len(want), ts.Len())
	}
}

// BenchmarkTimersChurn is Nexmark q4's timers through the service: a new
// key a step, with a timer a little after now, and every due one run,
// about 2,000 pending. With tracking (exactly-once) every change is
// listed, and an epoch closes every 500,000 steps (a second of q4).
func BenchmarkTimersChurn(b *testing.B) {
	for _, tracking := range []bool{false, true} {
		b.Run(fmt.Sprintf("tracking=%v", tracking), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			t := NewTimerService[int64]()
			if tracking {
				t.Track()
			}
			now, since := int64(0), uint64(0)
			for b.Loop() {
				t.Register(now, now+1+int64(r.IntN(4000)), false)
				now++
				t.AdvanceEvent(now, func(int64, int64) {})
				if tracking && now%500_000 == 0 {
					e, _ := t.log.close(Delta{Since: since, Keep: since}, func(uint64, *timerChange[int64]) error { return nil })
					since = e
				}
			}
		})
	}
}
