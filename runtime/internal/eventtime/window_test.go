package eventtime

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

// testAcc collects the numbers of the records a window got.
type testAcc struct{ ids []int }

func encTestAcc(w *codec.Writer, a *testAcc) {
	m := w.Begin()
	w.Uvarint(uint64(len(a.ids)))
	for _, id := range a.ids {
		w.Varint(int64(id))
	}
	w.End(m)
}

func decTestAcc(r *codec.Reader) *testAcc {
	sub := r.Nested()
	n := sub.Count()
	a := &testAcc{}
	for range n {
		a.ids = append(a.ids, int(sub.Varint()))
	}
	return a
}

func encTestKey(w *codec.Writer, k int) { w.Varint(int64(k)) }
func decTestKey(r *codec.Reader) int    { return int(r.Varint()) }

func mergeTestAcc(dst, src *testAcc) { dst.ids = append(dst.ids, src.ids...) }

// wemit is a window's result: fired ('F') by Advance or updated ('U') by Add.
type wemit struct {
	how byte
	key int
	w   Window
	ids []int
}

func (e wemit) String() string { return fmt.Sprintf("%c key=%d %v %v", e.how, e.key, e.w, e.ids) }

func sortEmits(es []wemit) {
	slices.SortFunc(es, func(a, b wemit) int {
		return cmp.Or(cmp.Compare(a.w.End, b.w.End), cmp.Compare(a.w.Start, b.w.Start), cmp.Compare(a.key, b.key))
	})
}

// A windowModel computes windows' results from scratch, the way the
// semantics are stated, to check WindowState against.
type windowModel interface {
	add(key int, ts, iwm int64, id int) (bool, []wemit)
	advance(wm int64) []wemit
}

// fixedModel is tumbling and sliding windows: it keeps the records each
// window accepted, forever, and finds windows by trying every start.
type fixedModel struct {
	size, slide, lateness, wm int64
	acc                       map[fixedKey][]int
}

type fixedKey struct {
	key int
	w   Window
}

func (m *fixedModel) windows(ts int64) []Window {
	var out []Window
	for n := (ts-m.size)/m.slide - 2; n*m.slide <= ts; n++ {
		if s := n * m.slide; s <= ts && ts < s+m.size {
			out = append(out, Window{s, s + m.size})
		}
	}
	return out
}

func (m *fixedModel) add(key int, ts, iwm int64, id int) (bool, []wemit) {
	wm := max(iwm, m.wm)
	all := m.windows(ts)
	var live []Window
	for _, w := range all {
		if w.End-1+m.lateness > wm {
			live = append(live, w)
		}
	}
	if len(all) > 0 && len(live) == 0 {
		return false, nil
	}
	var ups []wemit
	for _, w := range live {
		k := fixedKey{key, w}
		m.acc[k] = append(m.acc[k], id)
		if w.End-1 <= m.wm {
			ups = append(ups, wemit{'U', key, w, slices.Clone(m.acc[k])})
		}
	}
	return true, ups
}

func (m *fixedModel) advance(wm int64) []wemit {
	var out []wemit
	for k, ids := range m.acc {
		if mt := k.w.End - 1; m.wm < mt && mt <= wm {
			out = append(out, wemit{'F', k.key, k.w, slices.Clone(ids)})
		}
	}
	m.wm = max(m.wm, wm)
	sortEmits(out)
	return out
}

// sessionModel is session windows: it keeps the records of each key's
// sessions that are not closed yet and computes the sessions anew from
// them every time, by sorting their times.
type sessionModel struct {
	gap, lateness, wm int64
	open              map[int][]modelRec
	closed            [][]int // the records of every closed session
}

type modelRec struct {
	ts int64
	id int
}

type modelSession struct {
	w   Window
	ids []int
}

func (m *sessionModel) sessions(recs []modelRec) []modelSession {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b modelRec) int { return cmp.Compare(a.ts, b.ts) })
	var out []modelSession
	for _, r := range recs {
		if n := len(out); n > 0 && r.ts <= out[n-1].w.End {
			out[n-1].w.End = max(out[n-1].w.End, r.ts+m.gap)
			out[n-1].ids = append(out[n-1].ids, r.id)
			continue
		}
		out = append(out, modelSession{Window{r.ts, r.ts + m.gap}, []int{r.id}})
	}
	for _, s := range out {
		slices.Sort(s.ids)
	}
	return out
}

func (m *sessionModel) add(key int, ts, iwm int64, id int) (bool, []wemit) {
	wm := max(iwm, m.wm)
	recs := append(slices.Clone(m.open[key]), modelRec{ts, id})
	for _, s := range m.sessions(recs) {
		if !slices.Contains(s.ids, id) {
			continue
		}
		if s.w.End-1+m.lateness <= wm {
			return false, nil
		}
		m.open[key] = recs
		if s.w.End-1 <= m.wm {
			return true, []wemit{{'U', key, s.w, s.ids}}
		}
		return true, nil
	}
	panic("record in no session")
}

func (m *sessionModel) advance(wm int64) []wemit {
	var out []wemit
	old := m.wm
	m.wm = max(m.wm, wm)
	keys := make([]int, 0, len(m.open))
	for k := range m.open {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var keep []modelRec
		for _, s := range m.sessions(m.open[k]) {
			if mt := s.w.End - 1; old < mt && mt <= m.wm {
				out = append(out, wemit{'F', k, s.w, s.ids})
			}
			if s.w.End-1+m.lateness <= m.wm {
				m.closed = append(m.closed, s.ids)
				continue
			}
			for _, r := range m.open[k] {
				if slices.Contains(s.ids, r.id) {
					keep = append(keep, r)
				}
			}
		}
		m.open[k] = keep
	}
	sortEmits(out)
	return out
}

func newWindowModel(a WindowAssigner, lateness int64) windowModel {
	switch a.Kind {
	case Tumbling:
		return &fixedModel{size: a.Size, slide: a.Size, lateness: lateness, wm: MinTime, acc: map[fixedKey][]int{}}
	case Sliding:
		return &fixedModel{size: a.Size, slide: a.Slide, lateness: lateness, wm: MinTime, acc: map[fixedKey][]int{}}
	}
	return &sessionModel{gap: a.Gap, lateness: lateness, wm: MinTime, open: map[int][]modelRec{}}
}

func randomAssigner(rng *rand.Rand, kind WindowKind) WindowAssigner {
	switch kind {
	case Tumbling:
		return WindowAssigner{Kind: Tumbling, Size: 1 + rng.Int64N(20)}
	case Sliding:
		return WindowAssigner{Kind: Sliding, Size: 1 + rng.Int64N(20), Slide: 1 + rng.Int64N(25)}
	}
	return WindowAssigner{Kind: Session, Gap: 1 + rng.Int64N(10)}
}

func randomLateness(rng *rand.Rand) int64 {
	if rng.IntN(3) == 0 {
		return 0
	}
	return rng.Int64N(20)
}

// applyWindowOp runs one op on a WindowState and returns what it emitted.
func applyWindowOp(s *WindowState[int, testAcc], o testOp, sortIDs bool) (bool, []wemit) {
	return applyWindowOpBy(s, o, sortIDs, false)
}

// applyWindowOpBy is applyWindowOp that adds a record with Acc and Added
// when byAcc is set, as generated code does for tumbling windows.
func applyWindowOpBy(s *WindowState[int, testAcc], o testOp, sortIDs, byAcc bool) (bool, []wemit) {
	var out []wemit
	emit := func(how byte) func(k int, w Window, a *testAcc) {
		return func(k int, w Window, a *testAcc) {
			ids := slices.Clone(a.ids)
			if sortIDs {
				slices.Sort(ids)
			}
			out = append(out, wemit{how, k, w, ids})
		}
	}
	if o.kind == opAdd && byAcc {
		a := s.Acc(o.key, o.ts, o.iwm)
		if a == nil {
			return false, out
		}
		a.ids = append(a.ids, o.id)
		s.Added(emit('U'))
		return true, out
	}
	if o.kind == opAdd {
		ok := s.Add(o.key, o.ts, o.iwm, func(a *testAcc) { a.ids = append(a.ids, o.id) }, emit('U'))
		return ok, out
	}
	s.Advance(o.ts, emit('F'))
	return true, out
}

func newTestWindowState(a WindowAssigner, lateness int64) *WindowState[int, testAcc] {
	var merge func(dst, src *testAcc)
	if a.Kind == Session {
		merge = mergeTestAcc
	}
	return NewWindowState[int, testAcc](a, lateness, merge)
}

func TestWindowStateAgainstModel(t *testing.T) {
	t.Parallel()
	// Tumbling windows twice: by Add, and by Acc and Added; sliding
	// windows twice: their integer keys in pages, and in the map.
	for v, kind := range []WindowKind{Tumbling, Sliding, Session, Tumbling, Sliding} {
		byAcc := v == 3
		byMap := v == 4
		late, updates, fires, spilled := 0, 0, 0, 0
		for seed := range seeds(150) {
			rng := rand.New(rand.NewPCG(seed, uint64(kind)))
			a := randomAssigner(rng, kind)
			lateness := randomLateness(rng)
			ops := genStream(rng, 50+rng.IntN(250))
			s := newTestWindowState(a, lateness)
			if byMap && s.ix.dense {
				s.ix.toMap()
			}
			m := newWindowModel(a, lateness)
			session := kind == Session
			for i, o := range ops {
				ok, got := applyWindowOpBy(s, o, session, byAcc)
				var want []wemit
				wantOK := true
				if o.kind == opAdd {
					wantOK, want = m.add(o.key, o.ts, o.iwm, o.id)
					if !ok {
						late++
					}
				} else {
					for j := 1; j < len(got); j++ {
						if got[j].w.End < got[j-1].w.End {
							t.Fatalf("%v seed %d op %d: fired %v before %v", kind, seed, i, got[j-1], got[j])
						}
					}
					sortEmits(got)
					want = m.advance(o.ts)
				}
				for _, e := range got {
					if e.how == 'U' {
						updates++
					} else {
						fires++
					}
				}
				if ok != wantOK || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%v size=%d slide=%d gap=%d lateness=%d seed %d, op %d %v:\ngot  %v %v\nwant %v %v",
						kind, a.Size, a.Slide, a.Gap, lateness, seed, i, o, ok, got, wantOK, want)
				}
				if s.ix.width > 0 {
					if n := s.ix.pairs(); n != s.Len() {
						t.Fatalf("%v seed %d op %d: the pane index holds %d windows, the panes %d", kind, seed, i, n, s.Len())
					}
					spilled = max(spilled, len(s.ix.spill))
				}
			}
			if s.ix.pairs()+len(s.ix.spill) != 0 || s.ix.idle != s.ix.keys() {
				t.Fatalf("%v seed %d: the pane index holds %d windows, %d spilled, and %d of its %d keys are idle at the end of time",
					kind, seed, s.ix.pairs(), len(s.ix.spill), s.ix.idle, s.ix.keys())
			}
			if s.Len() != 0 || len(s.panes)+len(s.paneHeap)+len(s.sessions)+len(s.sessionHeap) != 0 {
				t.Fatalf("%v seed %d: %d windows left at the end of time", kind, seed, s.Len())
			}
		}
		t.Logf("%v (by Acc: %v, by map: %v): %d late records, %d updates, %d fired", kind, byAcc, byMap, late, updates, fires)
		if late == 0 || updates == 0 || fires == 0 {
			t.Errorf("%v: the streams did not exercise late records, updates and firings", kind)
		}
		if kind == Sliding && spilled == 0 {
			t.Errorf("%v: no window of a key was ever spilled from the pane index's ring", kind)
		}
	}
}

// TestPaneIndexFreesSlots checks that the slots of keys that no longer
// have windows are freed: a stream whose keys are new in every window
// must not grow the index without bound.
func TestPaneIndexFreesSlots(t *testing.T) {
	s := newTestWindowState(WindowAssigner{Kind: Sliding, Size: 30, Slide: 10}, 0)
	const perWindow = 1000
	most := 0
	for w := range int64(100) {
		for k := range perWindow {
			s.Add(int(w)*perWindow+k, w*10, MinTime, func(a *testAcc) {}, nil)
		}
		s.Advance(w*10+9, nil)
		most = max(most, s.ix.keys(), len(s.ix.live))
	}
	// Three windows are open, each with its keys, and as many idle ones
	// may wait for a sweep.
	if most > 7*perWindow {
		t.Fatalf("the pane index grew to %d slots for %d keys per window", most, perWindow)
	}
	s.Advance(MaxTime, nil)
	if s.ix.pairs() != 0 || s.Len() != 0 {
		t.Fatalf("at the end of time: %d pairs indexed, %d windows", s.ix.pairs(), s.Len())
	}
}

// TestPaneIndexSparseKeys checks that integer keys too sparse for pages
// of the key space move to the map, and that windows are the same either
// way: those of a state whose keys were always in the map.
func TestPaneIndexSparseKeys(t *testing.T) {
	a := WindowAssigner{Kind: Sliding, Size: 30, Slide: 10}
	s, m := newTestWindowState(a, 0), newTestWindowState(a, 0)
	if !s.ix.dense {
		t.Fatal("int keys are not in pages")
	}
	m.ix.toMap()
	var got, want []wemit
	emit := func(out *[]wemit) func(k int, w Window, a *testAcc) {
		return func(k int, w Window, a *testAcc) {
			*out = append(*out, wemit{'F', k, w, slices.Clone(a.ids)})
		}
	}
	id := 0
	for w := range int64(20) {
		for k := range 300 {
			// Dense keys at first (a page for 256 of them), then keys a
			// page apart and negative ones.
			key := k + int(w)*100
			if w >= 5 {
				key = (k*7919%300 - 150) * pageSize * 3
			}
			for _, st := range []*WindowState[int, testAcc]{s, m} {
				st.Add(key, w*10+int64(k%10), MinTime, func(a *testAcc) { a.ids = append(a.ids, id) }, nil)
			}
			id++
		}
		if w == 4 && !s.ix.dense {
			t.Fatal("dense keys left the pages")
		}
		s.Advance(w*10+9, emit(&got))
		m.Advance(w*10+9, emit(&want))
	}
	if s.ix.dense {
		t.Fatalf("keys a page apart stayed in %d pages", len(s.ix.pages))
	}
	s.Advance(MaxTime, emit(&got))
	m.Advance(MaxTime, emit(&want))
	if len(got) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d windows fired from pages then the map, %d from the map; they differ", len(got), len(want))
	}
}

// TestWindowStateLenTracksLateness checks that windows are dropped exactly
// when the watermark passes their end plus the allowed lateness.
func TestWindowStateLenTracksLateness(t *testing.T) {
	s := newTestWindowState(WindowAssigner{Kind: Tumbling, Size: 10}, 5)
	add := func(ts int64) bool { return s.Add(1, ts, MinTime, func(a *testAcc) {}, nil) }
	add(3)
	add(13)
	if s.Len() != 2 {
		t.Fatalf("Len = %d, want 2", s.Len())
	}
	var fired []Window
	fire := func(_ int, w Window, _ *testAcc) { fired = append(fired, w) }
	s.Advance(9, fire) // fires [0, 10), which stays until 14
	s.Advance(13, fire)
	if s.Len() != 2 || len(fired) != 1 {
		t.Fatalf("at 13: Len = %d, fired %v", s.Len(), fired)
	}
	s.Advance(14, fire)
	if s.Len() != 1 {
		t.Fatalf("at 14: Len = %d, want 1", s.Len())
	}
	if add(5) {
		t.Fatal("a record for a dropped window is not late")
	}
	if !add(10) {
		t.Fatal("a record within lateness of [10, 20) is late")
	}
	s.Advance(MaxTime, fire)
	if s.Len() != 0 || len(s.panes) != 0 || !slices.Equal(fired, []Window{{0, 10}, {10, 20}}) {
		t.Fatalf("at the end: Len = %d, %d panes, fired %v", s.Len(), len(s.panes), fired)
	}
}

// TestWindowStateLatenessPerInput checks that lateness is judged against
// the record's input's watermark, not the combined one.
func TestWindowStateLatenessPerInput(t *testing.T) {
	s := newTestWindowState(WindowAssigner{Kind: Tumbling, Size: 10}, 0)
	nop := func(*testAcc) {}
	s.Advance(5, nil) // the combined watermark: another input is at 5
	if s.Add(1, 7, 9, nop, nil) {
		t.Error("a record at 7 from an input at 9 is not late for [0, 10)")
	}
	if !s.Add(1, 7, 8, nop, nil) {
		t.Error("a record at 7 from an input at 8 is late for [0, 10)")
	}
	// The combined watermark counts too, should an input lag behind it.
	s.Advance(9, nil)
	if s.Add(1, 8, 3, nop, nil) {
		t.Error("a record for a window the combined watermark dropped is not late")
	}
}

func TestSessionMerging(t *testing.T) {
	type step struct {
		ts, iwm int64
		wm      int64 // advance to wm after the record, if not 0
		ok      bool
		emits   string
	}
	cases := []struct {
		name     string
		gap      int64
		lateness int64
		steps    []step
	}{
		{"bridge", 5, 0, []step{
			{ts: 0, ok: true},
			{ts: 20, ok: true},
			{ts: 10, ok: true},  // [10, 15) touches neither [0, 5) nor [20, 25)
			{ts: 5, ok: true},   // [5, 10) touches [0, 5) and [10, 15): [0, 15)
			{ts: 15, ok: true},  // touches [0, 15) and [20, 25): [0, 25)
			{wm: 23, emits: ""}, // not due
			{wm: 24, emits: "F key=1 [0, 25) [0 1 2 3 4]"},
			{ts: 19, iwm: 24},           // [19, 24) is late, and the session it touched is gone
			{ts: 25, iwm: 24, ok: true}, // [25, 30)
			{wm: MaxTime, emits: "F key=1 [25, 30) [8]"},
		}},
		{"merge a fired session within lateness", 5, 10, []step{
			{ts: 0, ok: true},
			{wm: 6, emits: "F key=1 [0, 5) [0]"},
			{ts: 8, iwm: 6, ok: true}, // [8, 13), apart from [0, 5)
			{ts: 4, iwm: 6, ok: true}, // [4, 9): bridges to [0, 13), not due
			{wm: 12, emits: "F key=1 [0, 13) [0 2 3]"},
			{ts: 2, iwm: 12, ok: true, emits: "U key=1 [0, 13) [0 2 3 5]"}, // within lateness, no change of window
			{ts: 9, iwm: 12, ok: true},                                     // [9, 14): extends to [0, 14), which fires at 13
			{wm: 13, emits: "F key=1 [0, 14) [0 2 3 5 6]"},
			{ts: 1, iwm: 13, ok: true, emits: "U key=1 [0, 14) [0 2 3 5 6 8]"},
			{ts: -10, iwm: 13, ok: false},                                           // [-10, -5) is late; it touches nothing
			{ts: -5, iwm: 13, ok: true, emits: "U key=1 [-5, 14) [0 2 3 5 6 8 10]"}, // late alone, but it touches [0, 14): due, so an update
			{wm: MaxTime},
		}},
		{"a late record that joins a session that is not late", 10, 0, []step{
			{ts: 100, iwm: 0, ok: true},
			{ts: 95, iwm: 105, ok: true}, // [95, 105) is late, [95, 110) is not
			{ts: 80, iwm: 105, ok: false},
			{wm: 110, emits: "F key=1 [95, 110) [0 1]"},
		}},
	}
	for _, c := range cases {
		s := newTestWindowState(WindowAssigner{Kind: Session, Gap: c.gap}, c.lateness)
		for i, st := range c.steps {
			var op testOp
			if st.wm != 0 {
				op = testOp{kind: opAdvance, ts: st.wm}
			} else {
				op = testOp{kind: opAdd, key: 1, ts: st.ts, iwm: cmp.Or(st.iwm, MinTime), id: i}
			}
			ok, got := applyWindowOp(s, op, true)
			var gots []string
			for _, e := range got {
				gots = append(gots, e.String())
			}
			if g := strings.Join(gots, "; "); g != st.emits && (st.wm != MaxTime || st.emits != "") || st.wm == 0 && ok != st.ok {
				t.Errorf("%s: step %d, %v: got %v %q, want %v %q", c.name, i, op, ok, g, st.ok, st.emits)
			}
		}
		if s.Len() != 0 {
			t.Errorf("%s: %d windows left", c.name, s.Len())
		}
	}
}

// TestWindowStateFiringOrder checks that windows of equal end fire in the
// order of their creation, and updates come in ascending window order.
func TestWindowStateFiringOrder(t *testing.T) {
	s := newTestWindowState(WindowAssigner{Kind: Sliding, Size: 10, Slide: 5}, 100)
	nop := func(*testAcc) {}
	for _, k := range []int{5, 3, 9, 1} {
		s.Add(k, 7, MinTime, nop, nil)
	}
	var got []string
	s.Advance(20, func(k int, w Window, _ *testAcc) { got = append(got, fmt.Sprint(k, w)) })
	want := "[5 [0, 10) 3 [0, 10) 9 [0, 10) 1 [0, 10) 5 [5, 15) 3 [5, 15) 9 [5, 15) 1 [5, 15)]"
	if fmt.Sprint(got) != want {
		t.Errorf("fired %v, want %v", got, want)
	}
	got = nil
	s.Add(3, 8, MinTime, nop, func(k int, w Window, _ *testAcc) { got = append(got, fmt.Sprint(k, w)) })
	if want := "[3 [0, 10) 3 [5, 15)]"; fmt.Sprint(got) != want {
		t.Errorf("updated %v, want %v", got, want)
	}
}

// windowEngine is a WindowState under the restore test.
type windowEngine struct {
	s       *WindowState[int, testAcc]
	session bool
}

func (e *windowEngine) apply(o testOp) []string {
	ok, emits := applyWindowOp(e.s, o, false)
	var out []string
	if o.kind == opAdd {
		out = append(out, fmt.Sprintf("add#%d %v", o.id, ok))
	}
	for _, em := range emits {
		out = append(out, em.String())
	}
	return out
}

func (e *windowEngine) len() int { return e.s.Len() }

func (e *windowEngine) snapshot(sec *state.Sections, keyGroup func(int) int) error {
	return e.s.Snapshot(sec, keyGroup, encTestKey, encTestAcc)
}

func (e *windowEngine) restore(section []byte) error {
	return e.s.Restore(section, decTestKey, decTestAcc)
}

func TestWindowStateRestore(t *testing.T) {
	t.Parallel()
	for _, kind := range []WindowKind{Tumbling, Sliding, Session} {
		for seed := range seeds(80) {
			rng := rand.New(rand.NewPCG(seed, 100+uint64(kind)))
			a := randomAssigner(rng, kind)
			lateness := randomLateness(rng)
			ops := genStream(rng, 50+rng.IntN(200))
			name := fmt.Sprintf("%v size=%d slide=%d gap=%d lateness=%d seed %d", kind, a.Size, a.Slide, a.Gap, lateness, seed)
			checkRestores(t, name, rng, ops, func() testEngine {
				return &windowEngine{s: newTestWindowState(a, lateness), session: kind == Session}
			})
		}
	}
}

// TestWindowStateRestoreThenAdvance checks that advancing a restored state
// to the watermark it was snapshotted at emits nothing.
func TestWindowStateRestoreThenAdvance(t *testing.T) {
	for seed := range seeds(100) {
		rng := rand.New(rand.NewPCG(seed, 7))
		kind := WindowKind(rng.IntN(3))
		a := randomAssigner(rng, kind)
		lateness := randomLateness(rng)
		ops := genStream(rng, 200)
		s := newTestWindowState(a, lateness)
		for _, o := range ops[:rng.IntN(len(ops))] {
			applyWindowOp(s, o, false)
		}
		sec := state.NewSections(0, testMaxParallelism)
		if err := s.Snapshot(sec, testKeyGroup, encTestKey, encTestAcc); err != nil {
			t.Fatal(err)
		}
		r := newTestWindowState(a, lateness)
		for i := range sec.W {
			if err := r.Restore(sec.W[i].Bytes(), decTestKey, decTestAcc); err != nil {
				t.Fatal(err)
			}
		}
		if r.Watermark() != s.Watermark() || r.Len() != s.Len() {
			t.Fatalf("seed %d: restored watermark %d and %d windows, want %d and %d", seed, r.Watermark(), r.Len(), s.Watermark(), s.Len())
		}
		r.Advance(s.Watermark(), func(k int, w Window, _ *testAcc) {
			t.Fatalf("seed %d: restored state fired %v of key %d again", seed, w, k)
		})
	}
}

func TestWindowStateRestoreErrors(t *testing.T) {
	s := newTestWindowState(WindowAssigner{Kind: Tumbling, Size: 10}, 0)
	s.Add(1, 5, MinTime, func(a *testAcc) { a.ids = append(a.ids, 1) }, nil)
	sec := state.NewSections(0, testMaxParallelism)
	if err := s.Snapshot(sec, testKeyGroup, encTestKey, encTestAcc); err != nil {
		t.Fatal(err)
	}
	data := sec.W[testKeyGroup(1)].Bytes()
	r := newTestWindowState(WindowAssigner{Kind: Tumbling, Size: 10}, 0)
	if err := r.Restore(data, decTestKey, decTestAcc); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(data, decTestKey, decTestAcc); err == nil {
		t.Error("a key restored twice is no error")
	}
	// Cut anywhere but right after the header (what an empty key group
	// holds), the section is corrupt.
	header := len(sec.W[(testKeyGroup(1)+1)%testMaxParallelism].Bytes())
	for n := range len(data) {
		r := newTestWindowState(WindowAssigner{Kind: Tumbling, Size: 10}, 0)
		if err := r.Restore(data[:n], decTestKey, decTestAcc); err == nil && n > 0 && n != header {
			t.Errorf("a section cut to %d of %d bytes is no error", n, len(data))
		}
	}
	// A key group outside the range.
	small := state.NewSections(0, 0)
	if err := s.Snapshot(small, testKeyGroup, encTestKey, encTestAcc); err == nil {
		t.Error("a key outside the subtask's key groups is no error")
	}
}

// BenchmarkWindowStateTumbling counts per key in tumbling windows of one
// second: 10k keys, records in time order with a little disorder, the
// watermark advanced every 1000 records. dense: 100 records per key and
// window; sparse: 1 (every record opens a window).
func BenchmarkWindowStateTumbling(b *testing.B) {
	for _, bc := range []struct {
		name  string
		perMS int64 // records per millisecond of event time
	}{{"dense", 1000}, {"sparse", 10}} {
		b.Run(bc.name, func(b *testing.B) {
			const keys = 10_000
			rng := rand.New(rand.NewPCG(1, 1))
			ks := make([]uint64, 1<<16)
			for i := range ks {
				ks[i] = rng.Uint64N(keys)
			}
			s := NewWindowState[uint64, int64](WindowAssigner{Kind: Tumbling, Size: 1000}, 0, nil)
			var fired int64
			fire := func(_ uint64, _ Window, acc *int64) { fired += *acc }
			add := func(acc *int64) { *acc++ }
			b.ReportAllocs()
			b.ResetTimer()
			for i := range int64(b.N) {
				ts := i/bc.perMS - int64(ks[i&0xffff]&7)
				s.Add(ks[i&0xffff], ts, MinTime, add, nil)
				if i%1000 == 999 {
					s.Advance(i/bc.perMS-50, fire)
				}
			}
			s.Advance(MaxTime, fire)
			b.StopTimer()
			if fired != int64(b.N) {
				b.Fatalf("counted %d of %d records", fired, b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkWindowStateAccFew is Nexmark q7's buckets: 64 keys in one
// tumbling window, each record folded into its key's accumulator by Acc
// (a highest price and the records at it); hand is the same fold into an
// array of 64 accumulators, the floor.
func BenchmarkWindowStateAccFew(b *testing.B) {
	type highest struct {
		price int64
		at    []int64
	}
	rng := rand.New(rand.NewPCG(1, 1))
	keys, prices := make([]int64, 1<<16), make([]int64, 1<<16)
	for i := range keys {
		keys[i], prices[i] = rng.Int64N(1<<40)%64, rng.Int64N(1<<20)
	}
	fold := func(h *highest, p int64) {
		switch {
		case len(h.at) == 0 || p > h.price:
			h.price, h.at = p, append(h.at[:0], p)
		case p == h.price:
			h.at = append(h.at, p)
		}
	}
	b.Run("acc", func(b *testing.B) {
		s := NewWindowState[int64, highest](WindowAssigner{Kind: Tumbling, Size: 1 << 40}, 0, nil)
		for i := 0; b.Loop(); i++ {
			if h := s.Acc(keys[i&0xffff], int64(i>>10), MinTime); h != nil {
				fold(h, prices[i&0xffff])
				s.Added(nil)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		var accs [64]highest
		for i := 0; b.Loop(); i++ {
			fold(&accs[keys[i&0xffff]], prices[i&0xffff])
		}
	})
}

// BenchmarkWindowStateGrow fills one tumbling window with a million keys,
// one record each, in a state made anew for every iteration: the pane's
// arrays double some ten times. counts: an int64 per key; records: the
// key's records in a slice (pointers, as a window join's; the appends
// keep the collector running while the arrays double, which the copies
// of arrays of pointers must let it interrupt: runtime/internal/pages).
func BenchmarkWindowStateGrow(b *testing.B) {
	const keys = 1_000_000
	b.Run("counts", func(b *testing.B) {
		for b.Loop() {
			s := NewWindowState[int64, int64](WindowAssigner{Kind: Tumbling, Size: 1000}, 0, nil)
			for k := range int64(keys) {
				*s.Acc(k, 0, MinTime)++
			}
			if s.Len() != keys {
				b.Fatalf("%d windows, want %d", s.Len(), keys)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
	})
	b.Run("records", func(b *testing.B) {
		for b.Loop() {
			s := NewWindowState[int64, []int64](WindowAssigner{Kind: Tumbling, Size: 1000}, 0, nil)
			for k := range int64(keys) {
				acc := s.Acc(k, 0, MinTime)
				*acc = append(*acc, k)
			}
			if s.Len() != keys {
				b.Fatalf("%d windows, want %d", s.Len(), keys)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/keys, "ns/key")
	})
}

// BenchmarkWindowStateSlidingSession is the same count in sliding windows
// of 10s every 1s (10 windows per record) and in sessions with a gap of
// 100ms, 100 records per key and second.
func BenchmarkWindowStateSlidingSession(b *testing.B) {
	for _, a := range []WindowAssigner{{Kind: Sliding, Size: 10_000, Slide: 1000}, {Kind: Session, Gap: 100}} {
		b.Run(a.Kind.String(), func(b *testing.B) {
			const keys = 10_000
			rng := rand.New(rand.NewPCG(1, 1))
			ks := make([]uint64, 1<<16)
			for i := range ks {
				ks[i] = rng.Uint64N(keys)
			}
			var merge func(dst, src *int64)
			if a.Kind == Session {
				merge = func(dst, src *int64) { *dst += *src }
			}
			s := NewWindowState[uint64, int64](a, 0, merge)
			var fired int64
			fire := func(_ uint64, _ Window, acc *int64) { fired += *acc }
			add := func(acc *int64) { *acc++ }
			b.ReportAllocs()
			b.ResetTimer()
			for i := range int64(b.N) {
				ts := i/1000 - int64(ks[i&0xffff]&7)
				s.Add(ks[i&0xffff], ts, MinTime, add, nil)
				if i%1000 == 999 {
					s.Advance(i/1000-50, fire)
				}
			}
			s.Advance(MaxTime, fire)
			b.StopTimer()
			if a.Kind == Session && fired != int64(b.N) {
				b.Fatalf("counted %d of %d records", fired, b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkTumblingHandWritten is the same count as a Go loop written for
// it, for comparison.
func BenchmarkTumblingHandWritten(b *testing.B) {
	for _, bc := range []struct {
		name  string
		perMS int64
	}{{"dense", 1000}, {"sparse", 10}} {
		b.Run(bc.name, func(b *testing.B) {
			const keys = 10_000
			rng := rand.New(rand.NewPCG(1, 1))
			ks := make([]uint64, 1<<16)
			for i := range ks {
				ks[i] = rng.Uint64N(keys)
			}
			type kw struct {
				k     uint64
				start int64
			}
			counts := map[kw]int64{}
			var fired int64
			flush := func(wm int64) {
				for k, n := range counts {
					if k.start+999 <= wm {
						fired += n
						delete(counts, k)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			flushed := int64(MinTime) // windows ending at or before this have been flushed
			for i := range int64(b.N) {
				ts := i/bc.perMS - int64(ks[i&0xffff]&7)
				start := ts - ((ts%1000)+1000)%1000
				counts[kw{ks[i&0xffff], start}]++
				if i%1000 == 999 {
					if wm := i/bc.perMS - 50; floorMultiple(wm+1, 1000) > flushed {
						flush(wm)
						flushed = floorMultiple(wm+1, 1000)
					}
				}
			}
			flush(MaxTime)
			b.StopTimer()
			if fired != int64(b.N) {
				b.Fatalf("counted %d of %d records", fired, b.N)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// twoSubtaskKeys returns a key of each of two subtasks.
func twoSubtaskKeys() (kA, kB int) {
	kA, kB = -1, -1
	for k := 0; kA < 0 || kB < 0; k++ {
		if keygroup.Owner(testKeyGroup(k), testMaxParallelism, 2) == 0 {
			kA = max(kA, k)
		} else {
			kB = max(kB, k)
		}
	}
	return kA, kB
}

// TestWindowStateRestoreMixedWatermarks restores, into one state, the
// snapshots of two subtasks that had fired a window for their keys at
// different times: each key's window fires once.
func TestWindowStateRestoreMixedWatermarks(t *testing.T) {
	kA, kB := twoSubtaskKeys()
	a := WindowAssigner{Kind: Tumbling, Size: 10}
	id := 0
	byAcc := false // records by Acc and Added, as generated code adds them, or by Add
	add := func(s *WindowState[int, testAcc], k int, ts, iwm int64) []wemit {
		id++
		_, out := applyWindowOpBy(s, testOp{kind: opAdd, key: k, ts: ts, iwm: iwm, id: id}, false, byAcc)
		return out
	}
	advance := func(s *WindowState[int, testAcc], wm int64) []wemit {
		_, out := applyWindowOp(s, testOp{kind: opAdvance, ts: wm}, false)
		return out
	}
	for _, tc := range []struct{ reverse, again, byAcc bool }{
		{false, false, false}, {true, false, false}, {false, true, false}, {true, true, false},
		{false, false, true}, {true, false, true}, {false, true, true}, {true, true, true},
	} {
		reverse, again := tc.reverse, tc.again
		byAcc = tc.byAcc
		name := fmt.Sprintf("reverse=%v again=%v byAcc=%v", reverse, again, byAcc)
		sa, sb := newTestWindowState(a, 100), newTestWindowState(a, 100)
		add(sa, kA, 5, MinTime)
		idA := id
		add(sb, kB, 5, MinTime)
		idB := id
		if got := fmt.Sprint(advance(sa, 9)); got != fmt.Sprintf("[F key=%d [0, 10) [%d]]", kA, idA) {
			t.Fatalf("%s: subtask 0 fired %s", name, got)
		}
		advance(sb, 5)
		sections := make([][]byte, testMaxParallelism)
		for i, s := range []*WindowState[int, testAcc]{sa, sb} {
			start, end := keygroup.Range(i, testMaxParallelism, 2)
			sec := state.NewSections(start, end)
			if err := s.Snapshot(sec, testKeyGroup, encTestKey, encTestAcc); err != nil {
				t.Fatal(err)
			}
			for j := range sec.W {
				sections[start+j] = sec.W[j].Bytes()
			}
		}
		if reverse {
			slices.Reverse(sections)
		}
		c := newTestWindowState(a, 100)
		for _, sec := range sections {
			if err := c.Restore(sec, decTestKey, decTestAcc); err != nil {
				t.Fatal(err)
			}
		}
		if again {
			// The merged state's snapshot keeps which key fired.
			sec := state.NewSections(0, testMaxParallelism)
			if err := c.Snapshot(sec, testKeyGroup, encTestKey, encTestAcc); err != nil {
				t.Fatal(err)
			}
			c = newTestWindowState(a, 100)
			for i := range sec.W {
				if err := c.Restore(sec.W[i].Bytes(), decTestKey, decTestAcc); err != nil {
					t.Fatal(err)
				}
			}
		}
		if c.Watermark() != 5 || c.Len() != 2 {
			t.Fatalf("%s: restored watermark %d and %d windows, want 5 and 2", name, c.Watermark(), c.Len())
		}
		if got, want := fmt.Sprint(add(c, kA, 6, 9)), fmt.Sprintf("[U key=%d [0, 10) [%d %d]]", kA, idA, id); got != want {
			t.Errorf("%s: a record for the window that fired before: %s, want %s", name, got, want)
		}
		// Again, now that the window's pane is the last record's (Acc's
		// fast path must not take it: the key fired in its subtask).
		if got, want := fmt.Sprint(add(c, kA, 6, 9)), fmt.Sprintf("[U key=%d [0, 10) [%d %d %d]]", kA, idA, id-1, id); got != want {
			t.Errorf("%s: a second record for the window that fired before: %s, want %s", name, got, want)
		}
		if got := add(c, kB, 7, 5); len(got) != 0 {
			t.Errorf("%s: a record for the window that had not fired: %v", name, got)
		}
		idB2 := id
		if got, want := fmt.Sprint(advance(c, 9)), fmt.Sprintf("[F key=%d [0, 10) [%d %d]]", kB, idB, idB2); got != want {
			t.Errorf("%s: fired %s, want %s", name, got, want)
		}
		if got, want := fmt.Sprint(add(c, kB, 8, 9)), fmt.Sprintf("[U key=%d [0, 10) [%d %d %d]]", kB, idB, idB2, id); got != want {
			t.Errorf("%s: a late record: %s, want %s", name, got, want)
		}
		if got := advance(c, MaxTime); len(got) != 0 || c.Len() != 0 {
			t.Errorf("%s: at the end, fired %v, %d windows left", name, got, c.Len())
		}
	}
}

// BenchmarkWindowStateSnapshot writes the open windows of 300k keys in
// sliding windows of 10s every 2s (five per key: 1.5M windows, Nexmark
// q5's state after half a second of its events) as a full snapshot into
// 128 key groups, as a checkpoint does at the barrier.
func BenchmarkWindowStateSnapshot(b *testing.B) {
	const keys = 300_000
	s := NewWindowState[int, int64](WindowAssigner{Kind: Sliding, Size: 10_000, Slide: 2000}, 0, nil)
	add := func(acc *int64) { *acc++ }
	ts := int64(1_436_918_400_000)
	for k := range keys {
		s.Add(k, ts+int64(k%500), MinTime, add, nil)
	}
	encAcc := func(w *codec.Writer, a *int64) { w.Varint(*a) }
	keyGroup := func(k int) int { return keygroup.Of(keygroup.HashInt64(int64(k)), 128) }
	var size int
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sec := state.NewSections(0, 128)
		if err := s.Snapshot(sec, keyGroup, encTestKey, encAcc); err != nil {
			b.Fatal(err)
		}
		size = 0
		for i := range sec.W {
			size += len(sec.W[i].Bytes())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(5*keys), "ns/window")
	b.ReportMetric(float64(size)/(5*keys), "bytes/window")
}

// BenchmarkWindowStateSnapshotSized is BenchmarkWindowStateSnapshot into
// sections made at the sizes of the last snapshot's (what a checkpoint's
// writer does, for full files and deltas alike): the buffers do not grow
// while the windows are encoded.
func BenchmarkWindowStateSnapshotSized(b *testing.B) {
	const keys = 300_000
	s := NewWindowState[int, int64](WindowAssigner{Kind: Sliding, Size: 10_000, Slide: 2000}, 0, nil)
	add := func(acc *int64) { *acc++ }
	ts := int64(1_436_918_400_000)
	for k := range keys {
		s.Add(k, ts+int64(k%500), MinTime, add, nil)
	}
	encAcc := func(w *codec.Writer, a *int64) { w.Varint(*a) }
	keyGroup := func(k int) int { return keygroup.Of(keygroup.HashInt64(int64(k)), 128) }
	hint := make([]int, 128)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sec := state.NewSectionsSized(0, 128, hint)
		if err := s.Snapshot(sec, keyGroup, encTestKey, encAcc); err != nil {
			b.Fatal(err)
		}
		for i := range sec.W {
			hint[i] = len(sec.W[i].Bytes())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(5*keys), "ns/window")
}

// TestWindowLayouts: a section of the entries' layout (WriteWindow, what
// checkpoints held before layoutPanes, and pebblestate's savepoints) is
// read, windows restored out of creation order (their pane unsorted)
// come back with their creation numbers from layoutPanes (a difference
// below zero), and a delta is read in either layout.
func TestWindowLayouts(t *testing.T) {
	a := WindowAssigner{Kind: Sliding, Size: 10, Slide: 5}
	type win struct {
		k     int
		w     Window
		seq   uint64
		fired bool
		n     int64
	}
	wins := []win{
		{7, Window{0, 10}, 40, false, 3}, {3, Window{0, 10}, 12, false, 1}, {9, Window{0, 10}, 90, true, 2},
		{3, Window{5, 15}, 13, false, 1}, {4, Window{5, 15}, 2, false, 5},
	}
	encAcc := func(w *codec.Writer, n *int64) { w.Varint(*n) }
	decAcc := func(r *codec.Reader) *int64 { n := r.Varint(); return &n }
	entries := func(delta bool) []byte {
		var w codec.Writer
		WriteWindowHeader(&w, 3, 100)
		for _, x := range wins {
			var k, acc codec.Writer
			encTestKey(&k, x.k)
			encAcc(&acc, &x.n)
			if delta {
				// A delta's entry starts with its operation.
				m := w.Begin()
				w.Uvarint(deltaPut)
				w.Raw(k.Bytes())
				w.Varint(x.w.Start)
				w.Varint(x.w.End)
				w.Uvarint(x.seq)
				w.Bool(x.fired)
				w.Raw(acc.Bytes())
				w.End(m)
				continue
			}
			WriteWindow(&w, k.Bytes(), x.w, x.seq, x.fired, acc.Bytes())
		}
		return w.Bytes()
	}
	got := func(s *WindowState[int, int64]) []win {
		var out []win
		s.Windows(func(k int, w Window, seq uint64, fired bool, acc *int64) bool {
			out = append(out, win{k, w, seq, fired, *acc})
			return true
		})
		slices.SortFunc(out, func(x, y win) int { return cmp.Or(cmp.Compare(x.w.Start, y.w.Start), cmp.Compare(x.k, y.k)) })
		return out
	}
	want := slices.Clone(wins)
	slices.SortFunc(want, func(x, y win) int { return cmp.Or(cmp.Compare(x.w.Start, y.w.Start), cmp.Compare(x.k, y.k)) })
	allOne := func(int) int { return 0 }

	old := NewWindowState[int, int64](a, 0, nil)
	if err := old.Restore(entries(false), decTestKey, decAcc); err != nil {
		t.Fatal(err)
	}
	if g := got(old); !slices.Equal(g, want) {
		t.Fatalf("restored from the entries' layout:\n%v\nwant\n%v", g, want)
	}
	sec := state.NewSections(0, 1)
	if err := old.Snapshot(sec, allOne, encTestKey, encAcc); err != nil {
		t.Fatal(err)
	}
	packed := sec.W[0].Bytes()
	if h, _ := readSectionHeader(codec.NewReader(packed)); h.layout != layoutPanes || h.wm != 3 || h.seq != 100 {
		t.Fatalf("header %+v, want layout %d, watermark 3, seq 100", h, layoutPanes)
	}
	re := NewWindowState[int, int64](a, 0, nil)
	if err := re.Restore(packed, decTestKey, decAcc); err != nil {
		t.Fatal(err)
	}
	if g := got(re); !slices.Equal(g, want) {
		t.Fatalf("restored from layoutPanes:\n%v\nwant\n%v", g, want)
	}
	wm, seq, ok, err := ReadWindows(packed, decTestKey, decAcc, func(int, Window, uint64, bool, *int64) error { return nil })
	if err != nil || !ok || wm != 3 || seq != 100 {
		t.Fatalf("ReadWindows of layoutPanes: %d %d %v %v", wm, seq, ok, err)
	}

	// Deltas on top of an empty full file, in either layout (a delta of
	// layoutPanes is written as a full file is).
	for name, delta := range map[string][]byte{"entries": entries(true), "panes": packed} {
		s := NewWindowState[int, int64](a, 0, nil)
		if err := s.RestoreSection(nil, false, decTestKey, decAcc); err != nil {
			t.Fatal(err)
		}
		if err := s.RestoreSection(delta, true, decTestKey, decAcc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.EndChain(); err != nil {
			t.Fatal(err)
		}
		if g := got(s); !slices.Equal(g, want) {
			t.Fatalf("restored from a delta of the %s' layout:\n%v\nwant\n%v", name, g, want)
		}
	}

	// A later layout, or operation, is refused.
	var w codec.Writer
	writeSectionHeader(&w, sectionHeader{wm: 3, layout: 7})
	if err := NewWindowState[int, int64](a, 0, nil).Restore(w.Bytes(), decTestKey, decAcc); err == nil || !strings.Contains(err.Error(), "layout 7") {
		t.Errorf("a section of layout 7: %v", err)
	}
	w = codec.Writer{}
	writeSectionHeader(&w, sectionHeader{wm: 3, layout: layoutPanes})
	w.Uvarint(4)
	if err := NewWindowState[int, int64](a, 0, nil).Restore(w.Bytes(), decTestKey, decAcc); err == nil || !strings.Contains(err.Error(), "unknown operation 2") {
		t.Errorf("a section with operation 2: %v", err)
	}
}

// TestSlidingAddReportsEarlyWindows checks that Add's path for sliding
// windows re-emits a key's window that had fired in a restored snapshot
// (pane.early) though its pane has not: TestWindowStateRestoreMixedWatermarks
// makes such windows with tumbling ones.
func TestSlidingAddReportsEarlyWindows(t *testing.T) {
	s := newTestWindowState(WindowAssigner{Kind: Sliding, Size: 20, Slide: 10}, 100)
	add := func(id int) func(a *testAcc) { return func(a *testAcc) { a.ids = append(a.ids, id) } }
	s.Add(1, 5, MinTime, add(1), nil)
	p := s.panes[0]
	i, ok := s.indexOf(p, 1)
	if !ok || p.fired {
		t.Fatalf("key 1 in window [0, 20): %v, fired %v", ok, p.fired)
	}
	p.early = map[int32]bool{i: true}
	var got []wemit
	s.Add(1, 6, MinTime, add(2), func(k int, w Window, a *testAcc) {
		got = append(got, wemit{'U', k, w, slices.Clone(a.ids)})
	})
	if want := "[U key=1 [0, 20) [1 2]]"; fmt.Sprint(got) != want {
		t.Fatalf("updates %v, want %s", got, want)
	}
}

// TestLargePanesFire checks that panes that grow their arrays many times
// (pane.double: keys, index slots, creation numbers, accumulators, and
// stamps once a checkpoint has started tracking changes) keep every
// window: each key's count in each window, and the firing order within
// a window (creation order), against a plain count; with integer and
// string keys (no pointers, and pointers the collector follows).
func TestLargePanesFire(t *testing.T) {
	t.Parallel()
	const keys = 5000
	for _, a := range []WindowAssigner{{Kind: Tumbling, Size: 10}, {Kind: Sliding, Size: 10, Slide: 5}} {
		t.Run(a.Kind.String(), func(t *testing.T) {
			ints := NewWindowState[int64, int64](a, 0, nil)
			strs := NewWindowState[string, []int64](a, 0, nil)
			type win struct {
				k     int64
				start int64
			}
			want := map[win]int64{}
			var order []win // each window's first record, in order
			rng := rand.New(rand.NewPCG(3, 4))
			for i := range 4 * keys {
				k := int64(rng.IntN(keys))
				ts := int64(i * 10 / (4 * keys)) // all in [0, 10)
				ints.Add(k, ts, MinTime, func(acc *int64) { *acc++ }, nil)
				strs.Add(fmt.Sprint(k), ts, MinTime, func(acc *[]int64) { *acc = append(*acc, k) }, nil)
				for _, w := range a.Assign(ts, nil) {
					if want[win{k, w.Start}]++; want[win{k, w.Start}] == 1 {
						order = append(order, win{k, w.Start})
					}
				}
				if i == keys {
					// Tracking starts: stamps from now on, in arrays that
					// grow with the others.
					ints.closeEpoch()
					strs.closeEpoch()
				}
			}
			var got, gotStr []win
			ints.Advance(MaxTime, func(k int64, w Window, acc *int64) {
				if *acc != want[win{k, w.Start}] {
					t.Errorf("key %d, window %v: count %d, want %d", k, w, *acc, want[win{k, w.Start}])
				}
				got = append(got, win{k, w.Start})
			})
			strs.Advance(MaxTime, func(ks string, w Window, acc *[]int64) {
				k, _ := strconv.ParseInt(ks, 10, 64)
				if int64(len(*acc)) != want[win{k, w.Start}] {
					t.Errorf("key %q, window %v: %d records, want %d", ks, w, len(*acc), want[win{k, w.Start}])
				}
				gotStr = append(gotStr, win{k, w.Start})
			})
			// Windows fire by end, each window's keys in creation order.
			slices.SortStableFunc(order, func(x, y win) int { return cmp.Compare(x.start, y.start) })
			for name, g := range map[string][]win{"integer keys": got, "string keys": gotStr} {
				if i := mismatch(g, order); i >= 0 {
					t.Errorf("%s: %d windows fired, want %d; the firing order leaves the creation order at window %d", name, len(g), len(order), i)
				}
			}
		})
	}
}

// mismatch returns the first index where a and b differ, -1 if they are
// equal.
func mismatch[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
