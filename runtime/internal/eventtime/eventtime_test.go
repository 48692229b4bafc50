package eventtime

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

func TestAssign(t *testing.T) {
	tumbling := func(size int64) WindowAssigner { return WindowAssigner{Kind: Tumbling, Size: size} }
	sliding := func(size, slide int64) WindowAssigner { return WindowAssigner{Kind: Sliding, Size: size, Slide: slide} }
	session := func(gap int64) WindowAssigner { return WindowAssigner{Kind: Session, Gap: gap} }
	ws := func(bounds ...int64) []Window {
		var out []Window
		for i := 0; i < len(bounds); i += 2 {
			out = append(out, Window{bounds[i], bounds[i+1]})
		}
		return out
	}
	cases := []struct {
		a    WindowAssigner
		ts   int64
		want []Window
	}{
		{tumbling(5), 0, ws(0, 5)},
		{tumbling(5), 4, ws(0, 5)},
		{tumbling(5), 5, ws(5, 10)},
		{tumbling(5), 12, ws(10, 15)},
		{tumbling(5), -1, ws(-5, 0)},
		{tumbling(5), -5, ws(-5, 0)},
		{tumbling(5), -6, ws(-10, -5)},
		{tumbling(1), -3, ws(-3, -2)},
		{tumbling(1000), 1_700_000_000_123, ws(1_700_000_000_000, 1_700_000_001_000)},
		{tumbling(3), MinTime, ws(MinTime, MinTime+3)}, // the floor is below MinTime: saturated
		{tumbling(3), MaxTime, ws(MaxTime-1-(MaxTime-1)%3, MaxTime)},
		{tumbling(MaxTime), 5, ws(0, MaxTime)},
		{tumbling(MaxTime), -5, ws(-MaxTime, 0)},
		// sliding, slide divides size
		{sliding(10, 5), 0, ws(-5, 5, 0, 10)},
		{sliding(10, 5), 4, ws(-5, 5, 0, 10)},
		{sliding(10, 5), 5, ws(0, 10, 5, 15)},
		{sliding(10, 5), 7, ws(0, 10, 5, 15)},
		{sliding(10, 5), -1, ws(-10, 0, -5, 5)},
		{sliding(10, 5), -5, ws(-10, 0, -5, 5)},
		{sliding(10, 5), -6, ws(-15, -5, -10, 0)},
		{sliding(4, 1), 2, ws(-1, 3, 0, 4, 1, 5, 2, 6)},
		{sliding(5, 5), -3, ws(-5, 0)},
		// sliding, slide does not divide size
		{sliding(10, 3), 7, ws(0, 10, 3, 13, 6, 16)},
		{sliding(10, 3), 9, ws(0, 10, 3, 13, 6, 16, 9, 19)},
		{sliding(10, 3), 10, ws(3, 13, 6, 16, 9, 19)},
		{sliding(10, 3), -1, ws(-9, 1, -6, 4, -3, 7)},
		{sliding(10, 3), -10, ws(-18, -8, -15, -5, -12, -2)},
		{sliding(10, 4), 1, ws(-8, 2, -4, 6, 0, 10)},
		// sliding with gaps between windows (slide > size)
		{sliding(3, 5), 0, ws(0, 3)},
		{sliding(3, 5), 2, ws(0, 3)},
		{sliding(3, 5), 3, nil},
		{sliding(3, 5), 4, nil},
		{sliding(3, 5), 5, ws(5, 8)},
		{sliding(3, 5), -1, nil},
		{sliding(3, 5), -3, ws(-5, -2)},
		{sliding(3, 5), -5, ws(-5, -2)},
		{sliding(3, 5), -6, nil},
		{sliding(2, 3), MinTime, ws(MinTime, MinTime+2)}, // [MinTime-1, MinTime+2), clamped
		{sliding(3, 2), MinTime, ws(MinTime, MinTime+3)},
		{sliding(4, 2), MaxTime, ws(MaxTime-3, MaxTime, MaxTime-1, MaxTime)},
		// sessions
		{session(4), 0, ws(0, 4)},
		{session(4), -3, ws(-3, 1)},
		{session(4), MaxTime - 2, ws(MaxTime-2, MaxTime)},
	}
	for _, c := range cases {
		got := c.a.Assign(c.ts, make([]Window, 3))
		if !slices.Equal(got, c.want) {
			t.Errorf("%v size=%d slide=%d gap=%d: Assign(%d) = %v, want %v", c.a.Kind, c.a.Size, c.a.Slide, c.a.Gap, c.ts, got, c.want)
		}
	}
}

// TestAssignBruteForce checks tumbling and sliding windows against every
// window start there is, for small sizes and times around zero.
func TestAssignBruteForce(t *testing.T) {
	var buf []Window
	for size := int64(1); size <= 12; size++ {
		for slide := int64(1); slide <= 14; slide++ {
			a := WindowAssigner{Kind: Sliding, Size: size, Slide: slide}
			if slide == size {
				a = WindowAssigner{Kind: Tumbling, Size: size}
			}
			for ts := int64(-60); ts <= 60; ts++ {
				var want []Window
				for s := int64(-100); s <= 100; s++ {
					if s%slide == 0 && s <= ts && ts < s+size {
						want = append(want, Window{s, s + size})
					}
				}
				buf = a.Assign(ts, buf)
				if !slices.Equal(buf, want) {
					t.Fatalf("size=%d slide=%d: Assign(%d) = %v, want %v", size, slide, ts, buf, want)
				}
				for _, w := range buf {
					if !w.Contains(ts) || w.MaxTimestamp() != w.End-1 {
						t.Fatalf("window %v does not contain %d", w, ts)
					}
				}
			}
		}
	}
}

func TestAssignerValidate(t *testing.T) {
	bad := []WindowAssigner{
		{Kind: Tumbling},
		{Kind: Tumbling, Size: -1},
		{Kind: Sliding, Size: 5},
		{Kind: Sliding, Slide: 5},
		{Kind: Session},
		{Kind: 7, Size: 1, Slide: 1, Gap: 1},
	}
	for _, a := range bad {
		if a.Validate() == nil {
			t.Errorf("%+v: no error", a)
		}
	}
	good := []WindowAssigner{{Kind: Tumbling, Size: 1}, {Kind: Sliding, Size: 1, Slide: 9}, {Kind: Session, Gap: 3}}
	for _, a := range good {
		if err := a.Validate(); err != nil {
			t.Errorf("%+v: %v", a, err)
		}
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	cases := []struct{ a, b, sum, diff int64 }{
		{1, 2, 3, -1},
		{MaxTime, 1, MaxTime, MaxTime - 1},
		{MaxTime, -1, MaxTime - 1, MaxTime},
		{MinTime, -1, MinTime, MinTime + 1},
		{MinTime, 1, MinTime + 1, MinTime},
		{MaxTime, MaxTime, MaxTime, 0},
		{MinTime, MinTime, MinTime, 0},
		{0, MinTime, MinTime, MaxTime},
		{-1, MinTime, MinTime, MaxTime},
		{-5, MinTime, MinTime, MaxTime - 4},
		{5, MaxTime, MaxTime, 5 - MaxTime},
		{-5, MaxTime, MaxTime - 5, MinTime},
	}
	for _, c := range cases {
		if got := addSat(c.a, c.b); got != c.sum {
			t.Errorf("addSat(%d, %d) = %d, want %d", c.a, c.b, got, c.sum)
		}
		if got := subSat(c.a, c.b); got != c.diff {
			t.Errorf("subSat(%d, %d) = %d, want %d", c.a, c.b, got, c.diff)
		}
	}
}

type heapTestItem struct {
	heapSlot
	id int
}

func TestTimeHeap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var h timeHeap[*heapTestItem]
	live := map[*heapTestItem]bool{}
	seq := uint64(0)
	for step := range 10000 {
		switch r := rng.IntN(10); {
		case r < 5 || len(h) == 0:
			it := &heapTestItem{id: step}
			it.at, it.seq = rng.Int64N(50), seq
			seq++
			h.push(it)
			live[it] = true
		case r < 7:
			// change a random element's time
			it := h[rng.IntN(len(h))]
			it.at = rng.Int64N(50)
			h.fix(it.hi)
		case r < 8:
			it := h[rng.IntN(len(h))]
			h.remove(it.hi)
			delete(live, it)
		default:
			var want *heapTestItem
			for it := range live {
				if want == nil || it.at < want.at || it.at == want.at && it.seq < want.seq {
					want = it
				}
			}
			got := h.remove(0)
			if got != want {
				t.Fatalf("step %d: popped (%d, %d), want (%d, %d)", step, got.at, got.seq, want.at, want.seq)
			}
			delete(live, got)
		}
		if len(h) != len(live) {
			t.Fatalf("heap has %d, want %d", len(h), len(live))
		}
		for i, it := range h {
			if it.hi != i {
				t.Fatalf("element at %d says %d", i, it.hi)
			}
		}
	}
}

// The randomized tests of the engines share a kind of stream: keyed
// records from 1 to 3 inputs, each with its own watermark that trails its
// records by a bound of disorder, some records later than the bound, and
// the combined watermark (the minimum over the inputs) passed to Advance.

type opKind uint8

const (
	opAdd opKind = iota
	opAdvance
	opRegister
	opDelete
	opAdvanceProcessing
)

type testOp struct {
	kind opKind
	left bool // join: the side; timers: the domain is processing
	key  int
	ts   int64 // record time, timer time, or the watermark or clock of an advance
	iwm  int64 // the record's input's watermark
	id   int   // the record's number: its index in the ops
}

func (o testOp) String() string {
	switch o.kind {
	case opAdd:
		return fmt.Sprintf("add#%d(key=%d left=%v ts=%d iwm=%d)", o.id, o.key, o.left, o.ts, o.iwm)
	case opAdvance:
		return fmt.Sprintf("advance(%d)", o.ts)
	case opRegister:
		return fmt.Sprintf("register(key=%d at=%d processing=%v)", o.key, o.ts, o.left)
	case opDelete:
		return fmt.Sprintf("delete(key=%d at=%d processing=%v)", o.key, o.ts, o.left)
	}
	return fmt.Sprintf("advanceProcessing(%d)", o.ts)
}

// genStream makes n records and watermark advances, and a last advance to
// the end of time.
func genStream(rng *rand.Rand, n int) []testOp {
	inputs := 1 + rng.IntN(3)
	keys := 1 + rng.IntN(5)
	bound := rng.Int64N(10)
	start := rng.Int64N(200) - 100
	clock := make([]int64, inputs)
	wms := make([]int64, inputs)
	for i := range clock {
		clock[i] = start
		wms[i] = MinTime
	}
	combined := MinTime
	var ops []testOp
	for len(ops) < n {
		i := rng.IntN(inputs)
		if rng.IntN(10) < 7 {
			clock[i] += rng.Int64N(4)
			ts := clock[i] - rng.Int64N(bound+1)
			if rng.IntN(15) == 0 {
				ts -= rng.Int64N(40) // beyond the bound of disorder
			}
			ops = append(ops, testOp{kind: opAdd, left: rng.IntN(2) == 0, key: rng.IntN(keys), ts: ts, iwm: wms[i], id: len(ops)})
			continue
		}
		w := clock[i] - bound - rng.Int64N(3)
		if rng.IntN(20) == 0 {
			w = clock[i] + rng.Int64N(10) // a jump ahead: what follows on this input is late
		}
		wms[i] = max(wms[i], w)
		c := slices.Min(wms)
		if c > combined || rng.IntN(3) == 0 {
			combined = max(combined, c)
			ops = append(ops, testOp{kind: opAdvance, ts: combined})
		}
	}
	return append(ops, testOp{kind: opAdvance, ts: MaxTime})
}

// A testEngine is an engine under the restore test: it applies ops and
// says what they emitted, one line per emission or result.
type testEngine interface {
	apply(o testOp) []string
	len() int
	snapshot(sec *state.Sections, keyGroup func(int) int) error
	restore(section []byte) error
}

const testMaxParallelism = 8

func testKeyGroup(k int) int { return keygroup.Of(keygroup.HashInt64(int64(k)), testMaxParallelism) }

// checkRestore runs ops[:at] on p1 engines that split the key groups, takes
// their snapshots, restores them into p2 fresh engines that split the key
// groups their way, and runs ops[at:] on both sets: every op must emit the
// same (in the same order when p1 == p2 == 1, where the order is defined
// across keys; as the same multiset otherwise).
func checkRestore(t *testing.T, name string, ops []testOp, at, p1, p2 int, newEngine func() testEngine) {
	t.Helper()
	run := func(es []testEngine, o testOp) []string {
		if o.kind == opAdd || o.kind == opRegister || o.kind == opDelete {
			sub := keygroup.Owner(testKeyGroup(o.key), testMaxParallelism, len(es))
			return es[sub].apply(o)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.apply(o)...)
		}
		return out
	}
	total := func(es []testEngine) int {
		n := 0
		for _, e := range es {
			n += e.len()
		}
		return n
	}
	orig := make([]testEngine, p1)
	for i := range orig {
		orig[i] = newEngine()
	}
	for _, o := range ops[:at] {
		run(orig, o)
	}
	sections := make([][]byte, testMaxParallelism)
	for i, e := range orig {
		start, end := keygroup.Range(i, testMaxParallelism, p1)
		sec := state.NewSections(start, end)
		if err := e.snapshot(sec, testKeyGroup); err != nil {
			t.Fatalf("%s: snapshot: %v", name, err)
		}
		for j := range sec.W {
			sections[start+j] = sec.W[j].Bytes()
		}
	}
	restored := make([]testEngine, p2)
	for i := range restored {
		restored[i] = newEngine()
		start, end := keygroup.Range(i, testMaxParallelism, p2)
		for kg := start; kg < end; kg++ {
			if err := restored[i].restore(sections[kg]); err != nil {
				t.Fatalf("%s: restore key group %d: %v", name, kg, err)
			}
		}
	}
	if a, b := total(orig), total(restored); a != b {
		t.Fatalf("%s: restored %d, had %d", name, b, a)
	}
	for i, o := range ops[at:] {
		want := run(orig, o)
		got := run(restored, o)
		if p1 != 1 || p2 != 1 {
			slices.Sort(want)
			slices.Sort(got)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: snapshot after op %d of %d (p %d -> %d); op %d, %v:\nrestored: %s\noriginal: %s", name, at, len(ops), p1, p2, at+i, o,
				strings.Join(got, "; "), strings.Join(want, "; "))
		}
		if a, b := total(orig), total(restored); a != b {
			t.Fatalf("%s: op %d, %v: restored engine holds %d, original %d", name, at+i, o, b, a)
		}
	}
}

// seeds is how many random streams a test tries: fewer with -short.
func seeds(n uint64) uint64 {
	if testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// checkRestores runs checkRestore at random points, with the same and
// with changed parallelism.
func checkRestores(t *testing.T, name string, rng *rand.Rand, ops []testOp, newEngine func() testEngine) {
	t.Helper()
	for _, p := range [][2]int{{1, 1}, {1, 1}, {1, 3}, {2, 1}, {3, 2}} {
		checkRestore(t, name, ops, rng.IntN(len(ops)+1), p[0], p[1], newEngine)
	}
}
