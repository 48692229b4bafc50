package eventtime

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

func encTrigAcc(w *codec.Writer, a *TriggerAcc[testAcc]) {
	w.Uvarint(a.N)
	encTestAcc(w, &a.Acc)
}

func decTrigAcc(r *codec.Reader) *TriggerAcc[testAcc] {
	n := r.Uvarint()
	return &TriggerAcc[testAcc]{N: n, Acc: *decTestAcc(r)}
}

// trigRec collects what triggered windows emit, as "firing key window ids".
type trigRec struct{ out []string }

func (c *trigRec) emit(k int, w Window, f pipegen.Firing, a *testAcc) {
	c.out = append(c.out, fmt.Sprintf("%s %d %v %v", f, k, w, a.ids))
}

func (c *trigRec) take() string {
	s := strings.Join(c.out, "; ")
	c.out = nil
	return s
}

func newTrig(c *trigRec, a WindowAssigner, lateness int64, t Trigger) *TriggeredWindows[int, testAcc] {
	var merge func(dst, src *testAcc)
	if a.Kind == Session {
		merge = mergeTestAcc
	}
	return NewTriggeredWindows[int](a, lateness, merge, t, c.emit)
}

func addID(id int) func(*testAcc) { return func(a *testAcc) { a.ids = append(a.ids, id) } }

func TestTriggerCount(t *testing.T) {
	for _, discard := range []bool{false, true} {
		c := &trigRec{}
		tw := newTrig(c, WindowAssigner{Kind: Tumbling, Size: 10}, 5, Trigger{Count: 2, Discard: discard})
		for i, ts := range []int64{1, 2, 3, 4, 5} {
			tw.Add(7, ts, MinTime, addID(i))
		}
		tw.Advance(9)              // the window [0, 10) closes
		tw.Add(7, 8, 9, addID(5))  // within the lateness: a late firing
		tw.Add(7, 9, 20, addID(6)) // too late
		tw.Advance(14)
		got := c.take()
		want := "early 7 [0, 10) [0 1]; early 7 [0, 10) [0 1 2 3]; on-time 7 [0, 10) [0 1 2 3 4]; late 7 [0, 10) [0 1 2 3 4 5]"
		if discard {
			want = "early 7 [0, 10) [0 1]; early 7 [0, 10) [2 3]; on-time 7 [0, 10) [4]; late 7 [0, 10) [5]"
		}
		if got != want {
			t.Errorf("discard %v:\n got %s\nwant %s", discard, got, want)
		}
	}
}

// TestTriggerDiscardNothingNew checks that in discard mode a window whose
// records were all emitted early emits nothing when it closes, and in
// accumulate mode emits its final result anyway.
func TestTriggerDiscardNothingNew(t *testing.T) {
	for _, discard := range []bool{false, true} {
		c := &trigRec{}
		tw := newTrig(c, WindowAssigner{Kind: Tumbling, Size: 10}, 0, Trigger{Count: 2, Discard: discard})
		tw.Add(1, 1, MinTime, addID(0))
		tw.Add(1, 2, MinTime, addID(1))
		tw.Advance(100)
		want := "early 1 [0, 10) [0 1]; on-time 1 [0, 10) [0 1]"
		if discard {
			want = "early 1 [0, 10) [0 1]"
		}
		if got := c.take(); got != want {
			t.Errorf("discard %v:\n got %s\nwant %s", discard, got, want)
		}
	}
}

func TestTriggerEventTimeInterval(t *testing.T) {
	c := &trigRec{}
	tw := newTrig(c, WindowAssigner{Kind: Tumbling, Size: 100}, 0, Trigger{Every: 10})
	tw.Add(1, 3, MinTime, addID(0))
	tw.Add(2, 4, MinTime, addID(1))
	tw.Advance(5) // the first watermark: a multiple of 10 passed since MinTime
	if got, want := c.take(), "early 1 [0, 100) [0]; early 2 [0, 100) [1]"; got != want {
		t.Errorf("first watermark:\n got %s\nwant %s", got, want)
	}
	tw.Add(1, 7, 5, addID(2))
	tw.Advance(9) // no multiple of 10 reached
	if got := c.take(); got != "" {
		t.Errorf("watermark 9 fired %s", got)
	}
	tw.Advance(10) // reached: only key 1 changed
	if got, want := c.take(), "early 1 [0, 100) [0 2]"; got != want {
		t.Errorf("watermark 10:\n got %s\nwant %s", got, want)
	}
	tw.Add(2, 150, 10, addID(3))
	tw.Add(2, 50, 10, addID(4))
	tw.Advance(120) // closes [0, 100): on time, not early; [100, 200) fires early
	if got, want := c.take(), "early 2 [100, 200) [3]; on-time 1 [0, 100) [0 2]; on-time 2 [0, 100) [1 4]"; got != want {
		t.Errorf("watermark 120:\n got %s\nwant %s", got, want)
	}
}

func TestTriggerProcessingInterval(t *testing.T) {
	c := &trigRec{}
	tw := newTrig(c, WindowAssigner{Kind: Tumbling, Size: 1000}, 0, Trigger{Every: 100, Processing: true})
	tw.Tick(5) // starts the clock
	tw.Add(1, 10, MinTime, addID(0))
	tw.Tick(50)
	tw.Advance(50)
	if got := c.take(); got != "" {
		t.Errorf("before 100 fired %s", got)
	}
	tw.Tick(130)
	tw.Advance(130)
	if got, want := c.take(), "early 1 [0, 1000) [0]"; got != want {
		t.Errorf("tick 130:\n got %s\nwant %s", got, want)
	}
	tw.Tick(250) // nothing new
	if got := c.take(); got != "" {
		t.Errorf("tick 250 fired %s", got)
	}
}

func TestTriggerSessions(t *testing.T) {
	c := &trigRec{}
	tw := newTrig(c, WindowAssigner{Kind: Session, Gap: 20}, 0, Trigger{Count: 3})
	tw.Add(1, 0, MinTime, addID(0))
	tw.Add(1, 30, MinTime, addID(1))
	tw.Add(1, 15, MinTime, addID(2)) // bridges the two sessions: 3 records
	tw.Advance(100)
	if got, want := c.take(), "early 1 [0, 50) [0 1 2]; on-time 1 [0, 50) [0 1 2]"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestTriggerRestore checks that triggered windows restored from a
// snapshot taken at any point emit what the ones that took it emit from
// then on: counts and accumulators are in the snapshot.
func TestTriggerRestore(t *testing.T) {
	for seed := range seeds(100) {
		rng := rand.New(rand.NewPCG(seed, 16))
		kind := WindowKind(rng.IntN(3))
		a := randomAssigner(rng, kind)
		lateness := randomLateness(rng)
		trig := Trigger{Count: uint64(rng.IntN(4)), Discard: rng.IntN(2) == 0}
		if trig.Count == 0 || rng.IntN(2) == 0 {
			trig.Every = int64(1 + rng.IntN(30))
		}
		ops := genStream(rng, 200)
		cut := rng.IntN(len(ops))
		c1 := &trigRec{}
		s := newTrig(c1, a, lateness, trig)
		apply := func(tw *TriggeredWindows[int, testAcc], o testOp) {
			if o.kind == opAdvance {
				tw.Advance(o.ts)
			} else {
				tw.Add(o.key, o.ts, o.iwm, addID(o.id))
			}
		}
		for _, o := range ops[:cut] {
			apply(s, o)
		}
		sec := state.NewSections(0, testMaxParallelism)
		if err := s.Snapshot(sec, testKeyGroup, encTestKey, encTrigAcc); err != nil {
			t.Fatal(err)
		}
		c2 := &trigRec{}
		r := newTrig(c2, a, lateness, trig)
		for i := range sec.W {
			if err := r.Restore(sec.W[i].Bytes(), decTestKey, decTrigAcc); err != nil {
				t.Fatal(err)
			}
		}
		c1.out = nil
		for _, o := range ops[cut:] {
			apply(s, o)
			apply(r, o)
		}
		s.Advance(MaxTime)
		r.Advance(MaxTime)
		if !slices.Equal(c1.out, c2.out) {
			t.Fatalf("seed %d (%v, %+v): after a restore\n got %v\nwant %v", seed, a, trig, c2.out, c1.out)
		}
	}
}

// TestSessionGapPerRecord checks sessions whose gap comes with each record:
// a record with a long gap bridges sessions that a short one would not.
func TestSessionGapPerRecord(t *testing.T) {
	s := NewWindowState[int, testAcc](WindowAssigner{Kind: Session, DynamicGap: true}, 0, mergeTestAcc)
	var got []string
	fire := func(k int, w Window, a *testAcc) { got = append(got, fmt.Sprintf("%d %v %v", k, w, a.ids)) }
	s.AddGap(1, 0, 5, MinTime, addID(0), fire)  // [0, 5)
	s.AddGap(1, 20, 5, MinTime, addID(1), fire) // [20, 25): apart
	s.AddGap(2, 0, 30, MinTime, addID(2), fire) // [0, 30)
	s.AddGap(2, 20, 5, MinTime, addID(3), fire) // inside
	s.AddGap(1, 4, 16, MinTime, addID(4), fire) // [4, 20): touches both, bridges them
	s.Advance(MaxTime, fire)
	want := []string{"1 [0, 25) [0 1 4]", "2 [0, 30) [2 3]"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Add on sessions with a gap per record did not panic")
		}
	}()
	s.Add(1, 100, MinTime, addID(5), fire)
}
