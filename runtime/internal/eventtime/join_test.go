package eventtime

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

// The joins' records are the numbers of the ops that added them.

func encTestRec(w *codec.Writer, v *int) { w.Varint(int64(*v)) }
func decTestRec(r *codec.Reader) *int {
	v := int(r.Varint())
	return &v
}

// ijModel keeps every record that was not late and joins by scanning all
// of them.
type ijModel struct {
	lower, upper, wm int64
	recs             []ijModelRec // arrival order
}

type ijModelRec struct {
	left bool
	key  int
	ts   int64
	id   int
}

func (m *ijModel) add(o testOp) (bool, []string) {
	if o.ts <= max(o.iwm, m.wm) {
		return false, nil
	}
	var matches []ijModelRec
	for _, r := range m.recs {
		if r.key != o.key || r.left == o.left {
			continue
		}
		l, rt := o.ts, r.ts
		if !o.left {
			l, rt = r.ts, o.ts
		}
		if l+m.lower <= rt && rt <= l+m.upper {
			matches = append(matches, r)
		}
	}
	slices.SortStableFunc(matches, func(a, b ijModelRec) int { return cmp.Compare(a.ts, b.ts) })
	var out []string
	for _, r := range matches {
		if o.left {
			out = append(out, fmt.Sprintf("L%d R%d @%d", o.id, r.id, max(o.ts, r.ts)))
		} else {
			out = append(out, fmt.Sprintf("L%d R%d @%d", r.id, o.id, max(o.ts, r.ts)))
		}
	}
	m.recs = append(m.recs, ijModelRec{o.left, o.key, o.ts, o.id})
	return true, out
}

// buffered is how many records can still match a record to come.
func (m *ijModel) buffered() int {
	n := 0
	for _, r := range m.recs {
		if r.left && r.ts+m.upper > m.wm || !r.left && r.ts-m.lower > m.wm {
			n++
		}
	}
	return n
}

func applyIntervalOp(j *IntervalJoin[int, int, int], o testOp) (bool, []string) {
	if o.kind == opAdvance {
		j.Advance(o.ts)
		return true, nil
	}
	var out []string
	emit := func(l, r int, ts int64) { out = append(out, fmt.Sprintf("L%d R%d @%d", l, r, ts)) }
	if o.left {
		return j.AddLeft(o.key, o.id, o.ts, o.iwm, emit), out
	}
	return j.AddRight(o.key, o.id, o.ts, o.iwm, emit), out
}

func randomBounds(rng *rand.Rand) (lower, upper int64) {
	lower = rng.Int64N(16) - 10
	return lower, lower + rng.Int64N(16)
}

func TestIntervalJoinAgainstModel(t *testing.T) {
	t.Parallel()
	pairs, late := 0, 0
	for seed := range seeds(200) {
		rng := rand.New(rand.NewPCG(seed, 21))
		lower, upper := randomBounds(rng)
		ops := genStream(rng, 50+rng.IntN(300))
		j := NewIntervalJoin[int, int, int](lower, upper)
		m := &ijModel{lower: lower, upper: upper, wm: MinTime}
		for i, o := range ops {
			ok, got := applyIntervalOp(j, o)
			wantOK, want := true, []string(nil)
			if o.kind == opAdd {
				wantOK, want = m.add(o)
			} else {
				m.wm = max(m.wm, o.ts)
			}
			if ok != wantOK || !slices.Equal(got, want) {
				t.Fatalf("[%d, %d] seed %d op %d %v: got %v %v, want %v %v", lower, upper, seed, i, o, ok, got, wantOK, want)
			}
			if j.Len() != m.buffered() {
				t.Fatalf("[%d, %d] seed %d op %d %v: %d buffered, want %d", lower, upper, seed, i, o, j.Len(), m.buffered())
			}
			pairs += len(got)
			if !ok {
				late++
			}
		}
		if j.Len() != 0 || len(j.keys) != 0 || len(j.heap) != 0 {
			t.Fatalf("seed %d: %d records left at the end of time", seed, j.Len())
		}
	}
	t.Logf("%d pairs, %d late records", pairs, late)
	if pairs == 0 || late == 0 {
		t.Error("the streams made no pairs or no late records")
	}
}

func TestIntervalJoinBetween(t *testing.T) {
	// between: [-5, 5]: a right record joins the left ones at most 5ms
	// apart, either way.
	j := NewIntervalJoin[string, string, string](-5, 5)
	var got []string
	emit := func(l, r string, ts int64) { got = append(got, fmt.Sprintf("%s+%s@%d", l, r, ts)) }
	j.AddLeft("k", "l10", 10, MinTime, emit)
	j.AddLeft("k", "l4", 4, MinTime, emit)
	j.AddLeft("k", "l16", 16, MinTime, emit)
	j.AddLeft("x", "x10", 10, MinTime, emit)
	j.AddLeft("k", "l9", 9, MinTime, emit)
	j.AddRight("k", "r9", 9, MinTime, emit)
	if want := "[l4+r9@9 l9+r9@9 l10+r9@10]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	got = nil
	j.Advance(10) // lefts up to 5 can no longer match: drops l4
	if j.Len() != 5 {
		t.Errorf("Len = %d after advancing to 10, want 5", j.Len())
	}
	if j.AddRight("k", "r10", 10, 10, emit) {
		t.Error("a right record at the watermark is not late")
	}
	j.AddRight("k", "r15", 15, 10, emit)
	if want := "[l10+r15@15 l16+r15@16]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	j.Advance(MaxTime)
	if j.Len() != 0 {
		t.Errorf("Len = %d at the end of time", j.Len())
	}
}

// intervalEngine is an IntervalJoin under the restore test.
type intervalEngine struct{ j *IntervalJoin[int, int, int] }

func (e *intervalEngine) apply(o testOp) []string {
	ok, out := applyIntervalOp(e.j, o)
	if o.kind == opAdd {
		out = append(out, fmt.Sprintf("add#%d %v", o.id, ok))
	}
	return out
}

func (e *intervalEngine) len() int { return e.j.Len() }

func (e *intervalEngine) snapshot(sec *state.Sections, keyGroup func(int) int) error {
	return e.j.Snapshot(sec, keyGroup, encTestKey, encTestRec, encTestRec)
}

func (e *intervalEngine) restore(section []byte) error {
	return e.j.Restore(section, decTestKey, decTestRec, decTestRec)
}

func TestIntervalJoinRestore(t *testing.T) {
	t.Parallel()
	for seed := range seeds(80) {
		rng := rand.New(rand.NewPCG(seed, 22))
		lower, upper := randomBounds(rng)
		ops := genStream(rng, 50+rng.IntN(250))
		checkRestores(t, fmt.Sprintf("interval [%d, %d] seed %d", lower, upper, seed), rng, ops, func() testEngine {
			return &intervalEngine{NewIntervalJoin[int, int, int](lower, upper)}
		})
	}
}

// wjEmit is a pair a window join emitted, and the advance that did.
type wjEmit struct {
	l, r int
	w    Window
	op   int
}

func applyWindowJoinOp(j *WindowJoin[int, int, int], o testOp, i int, out *[]wjEmit) bool {
	switch {
	case o.kind == opAdvance:
		j.Advance(o.ts, func(l, r int, w Window) { *out = append(*out, wjEmit{l, r, w, i}) })
		return true
	case o.left:
		return j.AddLeft(o.key, o.id, o.ts, o.iwm)
	}
	return j.AddRight(o.key, o.id, o.ts, o.iwm)
}

func TestWindowJoinAgainstModel(t *testing.T) {
	t.Parallel()
	for _, kind := range []WindowKind{Tumbling, Sliding, Session} {
		total := 0
		for seed := range seeds(100) {
			rng := rand.New(rand.NewPCG(seed, 30+uint64(kind)))
			a := randomAssigner(rng, kind)
			lateness := randomLateness(rng)
			ops := genStream(rng, 50+rng.IntN(200))
			name := fmt.Sprintf("%v size=%d slide=%d gap=%d lateness=%d seed %d", kind, a.Size, a.Slide, a.Gap, lateness, seed)
			j := NewWindowJoin[int, int, int](a, lateness)
			m := newWindowModel(a, lateness)
			var got, want []wjEmit
			// emitted is what the model has emitted per window.
			emitted := map[fixedKey]map[[2]int]bool{}
			for i, o := range ops {
				n := len(got)
				ok := applyWindowJoinOp(j, o, i, &got)
				if o.kind == opAdd {
					wantOK, _ := m.add(o.key, o.ts, o.iwm, o.id)
					if ok != wantOK {
						t.Fatalf("%s: op %d %v: %v, want %v", name, i, o, ok, wantOK)
					}
					continue
				}
				m.advance(o.ts)
				// Within one window and advance, pairs come in arrival
				// order of l, then r.
				for k := n + 1; k < len(got); k++ {
					p, q := got[k-1], got[k]
					if p.w == q.w && ops[p.l].key == ops[q.l].key && (q.l < p.l || q.l == p.l && q.r <= p.r) {
						t.Fatalf("%s: op %d: %v after %v", name, i, q, p)
					}
				}
				fm, fixed := m.(*fixedModel)
				if !fixed {
					continue
				}
				// The model's pairs not emitted yet of every window that
				// has fired.
				for k, ids := range fm.acc {
					if k.w.End-1 > fm.wm {
						continue
					}
					for _, l := range ids {
						for _, r := range ids {
							if !ops[l].left || ops[r].left || emitted[k][[2]int{l, r}] {
								continue
							}
							if emitted[k] == nil {
								emitted[k] = map[[2]int]bool{}
							}
							emitted[k][[2]int{l, r}] = true
							want = append(want, wjEmit{l, r, k.w, i})
						}
					}
				}
			}
			if j.Len() != 0 {
				t.Fatalf("%s: %d windows left at the end of time", name, j.Len())
			}
			total += len(got)
			if sm, ok := m.(*sessionModel); ok {
				// Every pair of a session, once, in a window that holds
				// both records.
				for _, ids := range sm.closed {
					for _, l := range ids {
						for _, r := range ids {
							if ops[l].left && !ops[r].left {
								want = append(want, wjEmit{l: l, r: r})
							}
						}
					}
				}
				for i, e := range got {
					if !e.w.Contains(ops[e.l].ts) || !e.w.Contains(ops[e.r].ts) {
						t.Fatalf("%s: pair %v: the window does not hold both records", name, e)
					}
					got[i] = wjEmit{l: e.l, r: e.r}
				}
			}
			order := func(a, b wjEmit) int {
				return cmp.Or(cmp.Compare(a.op, b.op), cmp.Compare(a.w.Start, b.w.Start), cmp.Compare(a.l, b.l), cmp.Compare(a.r, b.r))
			}
			slices.SortFunc(got, order)
			slices.SortFunc(want, order)
			if !slices.Equal(got, want) {
				t.Fatalf("%s:\ngot  %v\nwant %v", name, got, want)
			}
		}
		t.Logf("%v: %d pairs", kind, total)
		if total == 0 {
			t.Errorf("%v: no pairs", kind)
		}
	}
}

func TestWindowJoinLateUpdates(t *testing.T) {
	j := NewWindowJoin[string, string, string](WindowAssigner{Kind: Tumbling, Size: 10}, 5)
	var got []string
	emit := func(l, r string, w Window) { got = append(got, fmt.Sprintf("%s+%s%v", l, r, w)) }
	check := func(want string) {
		t.Helper()
		if fmt.Sprint(got) != want {
			t.Errorf("got %v, want %s", got, want)
		}
		got = nil
	}
	j.AddLeft("k", "l1", 1, MinTime)
	j.AddRight("k", "r1", 2, MinTime)
	j.AddLeft("k", "l2", 3, MinTime)
	j.AddRight("k", "r2", 4, MinTime)
	j.AddLeft("x", "x1", 4, MinTime)
	j.Advance(9, emit)
	check("[l1+r1[0, 10) l1+r2[0, 10) l2+r1[0, 10) l2+r2[0, 10)]")
	j.AddRight("k", "r3", 5, 9) // within lateness: new pairs only, at the next advance
	j.AddRight("x", "y1", 5, 9)
	check("[]")
	j.AddLeft("k", "l3", 6, 9)
	j.Advance(10, emit)
	check("[l1+r3[0, 10) l2+r3[0, 10) l3+r1[0, 10) l3+r2[0, 10) l3+r3[0, 10) x1+y1[0, 10)]")
	j.Advance(13, emit)
	check("[]")
	if j.AddLeft("k", "l4", 7, 14) {
		t.Error("a record past the lateness is not late")
	}
	j.Advance(14, emit)
	if j.Len() != 0 {
		t.Errorf("%d windows left", j.Len())
	}
}

func TestWindowJoinSessionMerge(t *testing.T) {
	j := NewWindowJoin[int, string, string](WindowAssigner{Kind: Session, Gap: 5}, 20)
	var got []string
	emit := func(l, r string, w Window) { got = append(got, fmt.Sprintf("%s+%s%v", l, r, w)) }
	j.AddLeft(1, "a", 0, MinTime)
	j.AddRight(1, "b", 2, MinTime) // [0, 7)
	j.AddLeft(1, "c", 10, MinTime)
	j.AddRight(1, "d", 11, MinTime) // [10, 16)
	j.Advance(6, emit)
	if want := "[a+b[0, 7)]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	got = nil
	j.AddRight(1, "e", 6, 6) // [6, 11) bridges the two sessions into [0, 16), which has not fired
	j.Advance(15, emit)
	// a+b was emitted; the rest of the merged session's pairs now.
	if want := "[a+d[0, 16) a+e[0, 16) c+b[0, 16) c+d[0, 16) c+e[0, 16)]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// windowJoinEngine is a WindowJoin under the restore test.
type windowJoinEngine struct{ j *WindowJoin[int, int, int] }

func (e *windowJoinEngine) apply(o testOp) []string {
	var emits []wjEmit
	ok := applyWindowJoinOp(e.j, o, 0, &emits)
	var out []string
	if o.kind == opAdd {
		out = append(out, fmt.Sprintf("add#%d %v", o.id, ok))
	}
	for _, p := range emits {
		out = append(out, fmt.Sprintf("L%d R%d %v", p.l, p.r, p.w))
	}
	return out
}

func (e *windowJoinEngine) len() int { return e.j.Len() }

func (e *windowJoinEngine) snapshot(sec *state.Sections, keyGroup func(int) int) error {
	return e.j.Snapshot(sec, keyGroup, encTestKey, encTestRec, encTestRec)
}

func (e *windowJoinEngine) restore(section []byte) error {
	return e.j.Restore(section, decTestKey, decTestRec, decTestRec)
}

func TestWindowJoinRestore(t *testing.T) {
	t.Parallel()
	for _, kind := range []WindowKind{Tumbling, Sliding, Session} {
		for seed := range seeds(25) {
			rng := rand.New(rand.NewPCG(seed, 40+uint64(kind)))
			a := randomAssigner(rng, kind)
			lateness := randomLateness(rng)
			ops := genStream(rng, 50+rng.IntN(120))
			name := fmt.Sprintf("window join %v size=%d slide=%d gap=%d lateness=%d seed %d", kind, a.Size, a.Slide, a.Gap, lateness, seed)
			checkRestores(t, name, rng, ops, func() testEngine {
				return &windowJoinEngine{NewWindowJoin[int, int, int](a, lateness)}
			})
		}
	}
}

func TestJoinRestoreErrors(t *testing.T) {
	ij := NewIntervalJoin[int, int, int](-1, 1)
	ij.AddLeft(1, 7, 5, MinTime, func(int, int, int64) {})
	wj := NewWindowJoin[int, int, int](WindowAssigner{Kind: Tumbling, Size: 10}, 0)
	wj.AddLeft(1, 7, 5, MinTime)
	for _, c := range []struct {
		name     string
		snapshot func(*state.Sections) error
		fresh    func() func([]byte) error
	}{
		{"interval",
			func(sec *state.Sections) error {
				return ij.Snapshot(sec, testKeyGroup, encTestKey, encTestRec, encTestRec)
			},
			func() func([]byte) error {
				j := NewIntervalJoin[int, int, int](-1, 1)
				return func(b []byte) error { return j.Restore(b, decTestKey, decTestRec, decTestRec) }
			}},
		{"window",
			func(sec *state.Sections) error {
				return wj.Snapshot(sec, testKeyGroup, encTestKey, encTestRec, encTestRec)
			},
			func() func([]byte) error {
				j := NewWindowJoin[int, int, int](WindowAssigner{Kind: Tumbling, Size: 10}, 0)
				return func(b []byte) error { return j.Restore(b, decTestKey, decTestRec, decTestRec) }
			}},
	} {
		sec := state.NewSections(0, testMaxParallelism)
		if err := c.snapshot(sec); err != nil {
			t.Fatal(err)
		}
		data := sec.W[testKeyGroup(1)].Bytes()
		restore := c.fresh()
		if err := restore(data); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := restore(data); err == nil {
			t.Errorf("%s: a key restored twice is no error", c.name)
		}
		header := len(sec.W[(testKeyGroup(1)+1)%testMaxParallelism].Bytes())
		for n := 1; n < len(data); n++ {
			if err := c.fresh()(data[:n]); err == nil && n != header {
				t.Errorf("%s: a section cut to %d of %d bytes is no error", c.name, n, len(data))
			}
		}
		if err := c.snapshot(state.NewSections(0, 0)); err == nil {
			t.Errorf("%s: a key outside the subtask's key groups is no error", c.name)
		}
	}
}

// TestWindowJoinRestoreThenMerge restores a fired session, then bridges it
// with a session that fired after the restore: the emission groups of the
// two must not be taken for one, or pairs across them would be lost.
func TestWindowJoinRestoreThenMerge(t *testing.T) {
	a := WindowAssigner{Kind: Session, Gap: 10}
	orig := NewWindowJoin[int, int, int](a, 100)
	orig.AddLeft(1, 0, 0, MinTime)
	orig.AddRight(1, 1, 1, MinTime) // [0, 11)
	orig.Advance(15, func(int, int, Window) {})
	sec := state.NewSections(0, testMaxParallelism)
	if err := orig.Snapshot(sec, testKeyGroup, encTestKey, encTestRec, encTestRec); err != nil {
		t.Fatal(err)
	}
	restored := NewWindowJoin[int, int, int](a, 100)
	for i := range sec.W {
		if err := restored.Restore(sec.W[i].Bytes(), decTestKey, decTestRec, decTestRec); err != nil {
			t.Fatal(err)
		}
	}
	for _, j := range []*WindowJoin[int, int, int]{orig, restored} {
		var got []string
		emit := func(l, r int, w Window) { got = append(got, fmt.Sprintf("%d+%d%v", l, r, w)) }
		j.AddLeft(1, 2, 20, 15)
		j.AddRight(1, 3, 21, 15) // [20, 31)
		j.Advance(40, emit)
		j.AddRight(1, 4, 10, 40) // [10, 20) bridges both into [0, 31)
		j.Advance(41, emit)
		if want := "[2+3[20, 31) 0+3[0, 31) 0+4[0, 31) 2+1[0, 31) 2+4[0, 31)]"; fmt.Sprint(got) != want {
			t.Errorf("got %v, want %s", got, want)
		}
	}
}

// TestWindowJoinRestoreMixedWatermarks restores, into one join, the
// snapshots of two subtasks that had fired a window for their keys at
// different times.
func TestWindowJoinRestoreMixedWatermarks(t *testing.T) {
	kA, kB := twoSubtaskKeys()
	a := WindowAssigner{Kind: Tumbling, Size: 10}
	for _, reverse := range []bool{false, true} {
		ja, jb := NewWindowJoin[int, int, int](a, 100), NewWindowJoin[int, int, int](a, 100)
		var got []string
		emit := func(l, r int, w Window) { got = append(got, fmt.Sprintf("%d+%d%v", l, r, w)) }
		ja.AddLeft(kA, 1, 1, MinTime)
		ja.AddRight(kA, 2, 2, MinTime)
		jb.AddLeft(kB, 3, 3, MinTime)
		jb.AddRight(kB, 4, 4, MinTime)
		ja.Advance(9, emit)
		jb.Advance(5, emit)
		if want := "[1+2[0, 10)]"; fmt.Sprint(got) != want {
			t.Fatalf("before the snapshot: %v, want %s", got, want)
		}
		got = nil
		sections := make([][]byte, testMaxParallelism)
		for i, j := range []*WindowJoin[int, int, int]{ja, jb} {
			start, end := keygroup.Range(i, testMaxParallelism, 2)
			sec := state.NewSections(start, end)
			if err := j.Snapshot(sec, testKeyGroup, encTestKey, encTestRec, encTestRec); err != nil {
				t.Fatal(err)
			}
			for k := range sec.W {
				sections[start+k] = sec.W[k].Bytes()
			}
		}
		if reverse {
			slices.Reverse(sections)
		}
		c := NewWindowJoin[int, int, int](a, 100)
		for _, sec := range sections {
			if err := c.Restore(sec, decTestKey, decTestRec, decTestRec); err != nil {
				t.Fatal(err)
			}
		}
		c.AddRight(kA, 5, 5, 9) // for a window that fired: a new pair at the next advance
		c.Advance(6, emit)
		if want := "[1+5[0, 10)]"; fmt.Sprint(got) != want {
			t.Errorf("reverse=%v: %v, want %s", reverse, got, want)
		}
		got = nil
		c.Advance(9, emit)
		if want := "[3+4[0, 10)]"; fmt.Sprint(got) != want {
			t.Errorf("reverse=%v: %v, want %s", reverse, got, want)
		}
	}
}
