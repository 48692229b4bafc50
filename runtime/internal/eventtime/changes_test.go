package eventtime

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

// A deltaEngine is an engine whose checkpoints may be deltas.
type deltaEngine interface {
	testEngine
	snapshotDelta(sec *state.Sections, keyGroup func(int) int, d Delta) (uint64, error)
	restoreSection(section []byte, delta bool) error
	endChain() error
	epoch() uint64
	track()
}

func (e *timerEngine) snapshotDelta(sec *state.Sections, keyGroup func(int) int, d Delta) (uint64, error) {
	return e.t.SnapshotDelta(sec, keyGroup, encTestKey, d)
}
func (e *timerEngine) restoreSection(section []byte, delta bool) error {
	return e.t.RestoreSection(section, delta, decTestKey)
}
func (e *timerEngine) endChain() error { return e.t.EndChain() }
func (e *timerEngine) epoch() uint64   { return e.t.Epoch() }
func (e *timerEngine) track()          { e.t.Track() }

func (e *windowEngine) snapshotDelta(sec *state.Sections, keyGroup func(int) int, d Delta) (uint64, error) {
	return e.s.SnapshotDelta(sec, keyGroup, encTestKey, encTestAcc, d)
}
func (e *windowEngine) restoreSection(section []byte, delta bool) error {
	return e.s.RestoreSection(section, delta, decTestKey, decTestAcc)
}
func (e *windowEngine) endChain() error { return e.s.EndChain() }
func (e *windowEngine) epoch() uint64   { return e.s.Epoch() }
func (e *windowEngine) track()          { e.s.Track() }

func (e *windowJoinEngine) snapshotDelta(sec *state.Sections, keyGroup func(int) int, d Delta) (uint64, error) {
	return e.j.SnapshotDelta(sec, keyGroup, encTestKey, encTestRec, encTestRec, d)
}
func (e *windowJoinEngine) restoreSection(section []byte, delta bool) error {
	return e.j.RestoreSection(section, delta, decTestKey, decTestRec, decTestRec)
}
func (e *windowJoinEngine) endChain() error { return e.j.EndChain() }
func (e *windowJoinEngine) epoch() uint64   { return e.j.Epoch() }
func (e *windowJoinEngine) track()          { e.j.Track() }

// chainFile is one state file of a subtask: its sections, by key group.
type chainFile struct {
	delta    bool
	sections [][]byte
}

// completed is a completed checkpoint: per subtask, the epoch its
// snapshot ended and its files (a full one, then deltas); and where in
// the ops and the output the job was.
type completed struct {
	epochs []uint64
	files  [][]chainFile
	p      int
	op     int
	out    int
}

// runWithCrashes runs ops on p engines that take checkpoints at random
// points, full or deltas on top of the last completed one (some fail),
// and crash now and then: the job then restores from the last completed
// checkpoint's chains, with the same or another parallelism, and replays
// the ops after it. It returns the output per op of the run as a job
// would have committed it (each op's lines sorted unless the
// parallelism is 1 throughout) and how many crashes it restored from.
func runWithCrashes(t *testing.T, name string, rng *rand.Rand, ops []testOp, rescale bool, newEngine func() deltaEngine) (out [][]string, crashes int) {
	t.Helper()
	p := 1
	if rescale {
		p = 1 + rng.IntN(3)
	}
	sorted := rescale
	engines := make([]deltaEngine, p)
	for i := range engines {
		engines[i] = newEngine()
	}
	var base *completed
	// chained is set when the engines' next checkpoints may build on
	// base's files: not after a restore into another parallelism.
	chained := false
	for i := 0; i < len(ops); i++ {
		o := ops[i]
		var lines []string
		if o.kind == opAdd || o.kind == opRegister || o.kind == opDelete {
			lines = engines[keygroup.Owner(testKeyGroup(o.key), testMaxParallelism, p)].apply(o)
		} else {
			for _, e := range engines {
				lines = append(lines, e.apply(o)...)
			}
		}
		if sorted {
			slices.Sort(lines)
		}
		out = append(out, lines)
		if rng.IntN(6) == 0 {
			ck := &completed{p: p, op: i + 1, out: len(out)}
			for s, e := range engines {
				start, end := keygroup.Range(s, testMaxParallelism, p)
				d := Delta{Full: true, Keep: e.epoch()}
				var prev []chainFile
				if chained {
					prev = base.files[s]
					d = Delta{Full: len(prev) >= 5 || rng.IntN(8) == 0, Since: base.epochs[s], Keep: base.epochs[s]}
				}
				sec := state.NewSections(start, end)
				epoch, err := e.snapshotDelta(sec, testKeyGroup, d)
				if err != nil {
					t.Fatalf("%s: op %d: snapshot: %v", name, i, err)
				}
				f := chainFile{delta: !d.Full, sections: make([][]byte, testMaxParallelism)}
				for j := range sec.W {
					f.sections[start+j] = slices.Clone(sec.W[j].Bytes())
				}
				files := []chainFile{f}
				if !d.Full {
					files = append(slices.Clone(prev), f)
				}
				ck.epochs = append(ck.epochs, epoch)
				ck.files = append(ck.files, files)
			}
			if rng.IntN(4) != 0 { // the others fail: later deltas build on base
				base, chained = ck, true
			}
		}
		if base != nil && rng.IntN(25) == 0 {
			crashes++
			p2 := base.p
			if rescale && rng.IntN(2) == 0 {
				p2 = 1 + rng.IntN(3)
			}
			engines = make([]deltaEngine, p2)
			for s := range engines {
				e := newEngine()
				engines[s] = e
				start, end := keygroup.Range(s, testMaxParallelism, p2)
				for old, files := range base.files {
					ostart, oend := keygroup.Range(old, testMaxParallelism, base.p)
					if oend <= start || ostart >= end {
						continue
					}
					for _, f := range files {
						for kg := max(start, ostart); kg < min(end, oend); kg++ {
							if err := e.restoreSection(f.sections[kg], f.delta); err != nil {
								t.Fatalf("%s: op %d: restore key group %d: %v", name, i, kg, err)
							}
						}
					}
					if err := e.endChain(); err != nil {
						t.Fatalf("%s: op %d: end chain: %v", name, i, err)
					}
				}
				if p2 == base.p {
					e.track() // the next checkpoint may build on the same files
				}
			}
			// Another parallelism: nothing builds on the old files. The
			// same: the next delta holds every change of the restored
			// engines (package checkpoint's restored chain link has epoch
			// 0, before every epoch of a new state).
			chained = p2 == base.p
			base.epochs = make([]uint64, base.p)
			p = p2
			out = out[:base.out]
			i = base.op - 1
		}
	}
	return out, crashes
}

// checkDeltaChains compares runs with checkpoints, deltas and crashes
// with a run without checkpoints.
func checkDeltaChains(t *testing.T, name string, rng *rand.Rand, ops []testOp, newEngine func() deltaEngine) (crashes int) {
	t.Helper()
	for _, rescale := range []bool{false, true} {
		ref := newEngine()
		var want [][]string
		for _, o := range ops {
			lines := ref.apply(o)
			if rescale {
				slices.Sort(lines)
			}
			want = append(want, lines)
		}
		got, n := runWithCrashes(t, name, rng, ops, rescale, newEngine)
		crashes += n
		for i := range want {
			if i >= len(got) || !slices.Equal(got[i], want[i]) {
				var g []string
				if i < len(got) {
					g = got[i]
				}
				t.Fatalf("%s (rescale %v, %d crashes): op %d, %v:\nwith checkpoints: %s\nwithout:          %s", name, rescale, n, i, ops[i],
					strings.Join(g, "; "), strings.Join(want[i], "; "))
			}
		}
	}
	return crashes
}

func TestTimersDeltaChains(t *testing.T) {
	t.Parallel()
	crashes := 0
	for seed := range seeds(150) {
		rng := rand.New(rand.NewPCG(seed, 21))
		ops := genTimerOps(rng, 100+rng.IntN(300))
		crashes += checkDeltaChains(t, fmt.Sprintf("timers seed %d", seed), rng, ops, func() deltaEngine {
			return &timerEngine{NewTimerService[int]()}
		})
	}
	if crashes == 0 {
		t.Error("no run crashed and restored")
	}
}

func TestWindowsDeltaChains(t *testing.T) {
	t.Parallel()
	for _, kind := range []WindowKind{Tumbling, Sliding} {
		crashes := 0
		for seed := range seeds(150) {
			rng := rand.New(rand.NewPCG(seed, 31+uint64(kind)))
			a := randomAssigner(rng, kind)
			lateness := randomLateness(rng)
			ops := genStream(rng, 100+rng.IntN(300))
			name := fmt.Sprintf("%v size=%d slide=%d lateness=%d seed %d", kind, a.Size, a.Slide, lateness, seed)
			crashes += checkDeltaChains(t, name, rng, ops, func() deltaEngine {
				return &windowEngine{s: newTestWindowState(a, lateness)}
			})
		}
		if crashes == 0 {
			t.Errorf("%v: no run crashed and restored", kind)
		}
	}
}

// TestWindowJoinDeltaChains checks a window join's deltas as
// TestWindowsDeltaChains does windows': its records change when they
// arrive and when their window emits them (fires, or emits the pairs of
// records that came late), and a restore from a full file and deltas
// emits every pair once.
func TestWindowJoinDeltaChains(t *testing.T) {
	t.Parallel()
	for _, kind := range []WindowKind{Tumbling, Sliding} {
		crashes := 0
		for seed := range seeds(150) {
			rng := rand.New(rand.NewPCG(seed, 41+uint64(kind)))
			a := randomAssigner(rng, kind)
			lateness := randomLateness(rng)
			ops := genStream(rng, 100+rng.IntN(300))
			name := fmt.Sprintf("join %v size=%d slide=%d lateness=%d seed %d", kind, a.Size, a.Slide, lateness, seed)
			crashes += checkDeltaChains(t, name, rng, ops, func() deltaEngine {
				return &windowJoinEngine{NewWindowJoin[int, int, int](a, lateness)}
			})
		}
		if crashes == 0 {
			t.Errorf("%v: no run crashed and restored", kind)
		}
	}
}

// sectionBytes is the size of sections.
func sectionBytes(sec *state.Sections) int {
	n := 0
	for i := range sec.W {
		n += len(sec.W[i].Bytes())
	}
	return n
}

// TestDeltaWritesLittle checks that after a small change a delta is a
// small part of the full snapshot, and that the full snapshot and the
// delta restore to the state as it is.
func TestDeltaWritesLittle(t *testing.T) {
	kg := func(k int) int { return keygroup.Of(keygroup.HashInt64(int64(k)), 16) }
	t.Run("timers", func(t *testing.T) {
		const n = 20_000
		ts := NewTimerService[int]()
		for i := range n {
			ts.Register(i, int64(i%1000), i%3 == 0)
		}
		full := state.NewSections(0, 16)
		e, err := ts.SnapshotDelta(full, kg, encTestKey, Delta{Full: true, Keep: ts.Epoch()})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n / 100 { // 1%: moved later, and a few new ones
			ts.Delete(i*7, int64(i*7%1000), i*7%3 == 0)
			ts.Register(i*7, 5000+int64(i), false)
		}
		ts.AdvanceEvent(2, func(int, int64) {}) // run some, which a delta deletes
		delta := state.NewSections(0, 16)
		if _, err := ts.SnapshotDelta(delta, kg, encTestKey, Delta{Since: e, Keep: e}); err != nil {
			t.Fatal(err)
		}
		f, d := sectionBytes(full), sectionBytes(delta)
		t.Logf("full %d bytes, delta %d bytes", f, d)
		if d*20 > f {
			t.Errorf("the delta after 1%% of the timers changed is %d bytes, the full snapshot %d: want under 5%%", d, f)
		}
		r := NewTimerService[int]()
		for i := range full.W {
			if err := r.RestoreSection(full.W[i].Bytes(), false, decTestKey); err != nil {
				t.Fatal(err)
			}
		}
		for i := range delta.W {
			if err := r.RestoreSection(delta.W[i].Bytes(), true, decTestKey); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := timerList(r), timerList(ts); got != want {
			t.Errorf("restored from the full file and the delta:\n%.300s\nwant\n%.300s", got, want)
		}
	})
	t.Run("windows", func(t *testing.T) {
		const n = 20_000
		ws := newTestWindowState(WindowAssigner{Kind: Tumbling, Size: 1000}, 0)
		add := func(k int) func(*testAcc) { return func(a *testAcc) { a.ids = append(a.ids, k) } }
		for k := range n {
			ws.Add(k, int64(k%2000), MinTime, add(k), nil) // two windows
		}
		full := state.NewSections(0, 16)
		e, err := ws.SnapshotDelta(full, kg, encTestKey, encTestAcc, Delta{Full: true, Keep: ws.Epoch()})
		if err != nil {
			t.Fatal(err)
		}
		for k := range n / 100 {
			ws.Add(k*13, 1500, MinTime, add(-k), nil)
		}
		ws.Advance(999, func(int, Window, *testAcc) {}) // the first window fires and goes
		delta := state.NewSections(0, 16)
		if _, err := ws.SnapshotDelta(delta, kg, encTestKey, encTestAcc, Delta{Since: e, Keep: e}); err != nil {
			t.Fatal(err)
		}
		f, d := sectionBytes(full), sectionBytes(delta)
		t.Logf("full %d bytes, delta %d bytes", f, d)
		if d*20 > f {
			t.Errorf("the delta after 1%% of the keys got a record is %d bytes, the full snapshot %d: want under 5%%", d, f)
		}
		r := newTestWindowState(WindowAssigner{Kind: Tumbling, Size: 1000}, 0)
		for _, s := range [][]codecSections{{{full, false}, {delta, true}}} {
			for _, x := range s {
				for i := range x.sec.W {
					if err := r.RestoreSection(x.sec.W[i].Bytes(), x.delta, decTestKey, decTestAcc); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := r.EndChain(); err != nil {
			t.Fatal(err)
		}
		if got, want := windowList(r), windowList(ws); got != want {
			t.Errorf("restored from the full file and the delta:\n%.300s\nwant\n%.300s", got, want)
		}
		if r.Len() != ws.Len() {
			t.Errorf("restored %d windows, the state has %d", r.Len(), ws.Len())
		}
	})
}

type codecSections struct {
	sec   *state.Sections
	delta bool
}

// timerList lists a service's timers, sorted, with its next number.
func timerList(t *TimerService[int]) string {
	var l []string
	t.timers(func(k int, tm timerRec) error {
		l = append(l, fmt.Sprintf("%d@%d/%v#%d", k, tm.at, tm.processing, tm.seq))
		return nil
	})
	slices.Sort(l)
	return fmt.Sprint(t.seq, l)
}

// windowList lists a state's windows, sorted, with its watermark and
// next number.
func windowList(s *WindowState[int, testAcc]) string {
	var l []string
	s.Windows(func(k int, w Window, seq uint64, fired bool, acc *testAcc) bool {
		l = append(l, fmt.Sprintf("%d%v#%d/%v%v", k, w, seq, fired, acc.ids))
		return true
	})
	slices.Sort(l)
	return fmt.Sprint(s.wm, s.seq, l)
}

// TestTimersComeAndGoInAnEpoch checks that timers registered and gone
// within one epoch leave (almost) nothing in its list of changes, as a
// key that comes and goes in q4 does, and that the delta still restores
// the timers as they are when a timer of the base was deleted, another
// at the same time of the same key registered, and the list compacted
// in between (the order of the two changes matters to a restore).
func TestTimersComeAndGoInAnEpoch(t *testing.T) {
	kg := func(k int) int { return keygroup.Of(keygroup.HashInt64(int64(k)), 16) }
	ts := NewTimerService[int]()
	const late = 1 << 40
	for k := range 10 {
		ts.Register(k, late, false)
	}
	full := state.NewSections(0, 16)
	e, err := ts.SnapshotDelta(full, kg, encTestKey, Delta{Full: true, Keep: ts.Epoch()})
	if err != nil {
		t.Fatal(err)
	}
	ts.Delete(0, late, false) // in the base: its delete is listed
	const n = 100_000
	for i := range n {
		k := 1000 + i
		ts.Register(k, int64(200+i), false)
		if i%3 == 0 {
			ts.Delete(k, int64(200+i), false)
		}
	}
	ts.Register(0, late, false)                    // the same timer as the deleted one, a new number
	ts.AdvanceEvent(200+n-10, func(int, int64) {}) // runs the others but the last ten
	if max := 2*1024 + 10 + 2; len(ts.log.cur) > max {
		t.Errorf("the epoch lists %d changes (%d voids) after %d timers came and went: want at most %d", len(ts.log.cur), ts.log.voids, n, max)
	}
	delta := state.NewSections(0, 16)
	if _, err := ts.SnapshotDelta(delta, kg, encTestKey, Delta{Since: e, Keep: e}); err != nil {
		t.Fatal(err)
	}
	r := NewTimerService[int]()
	for _, x := range []codecSections{{full, false}, {delta, true}} {
		for i := range x.sec.W {
			if err := r.RestoreSection(x.sec.W[i].Bytes(), x.delta, decTestKey); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, want := timerList(r), timerList(ts); got != want {
		t.Errorf("restored from the full file and the delta:\n%.300s\nwant\n%.300s", got, want)
	}
	if ts.Len() != 10+6 { // the last ten but those of i%3 == 0
		t.Errorf("%d timers set, want 16", ts.Len())
	}
}
