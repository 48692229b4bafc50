package eventtime

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

// timerModel is a list of timers, scanned for the earliest.
type timerModel struct {
	timers []modelTimer
	seq    int
}

type modelTimer struct {
	key        int
	at         int64
	processing bool
	seq        int
}

func (m *timerModel) find(k int, at int64, processing bool) int {
	return slices.IndexFunc(m.timers, func(t modelTimer) bool { return t.key == k && t.at == at && t.processing == processing })
}

func (m *timerModel) register(k int, at int64, processing bool) {
	if m.find(k, at, processing) < 0 {
		m.timers = append(m.timers, modelTimer{k, at, processing, m.seq})
		m.seq++
	}
}

func (m *timerModel) delete(k int, at int64, processing bool) {
	if i := m.find(k, at, processing); i >= 0 {
		m.timers = slices.Delete(m.timers, i, i+1)
	}
}

func (m *timerModel) advance(processing bool, now int64, fire func(k int, at int64)) {
	for {
		best := -1
		for i, t := range m.timers {
			if t.processing == processing && t.at <= now && (best < 0 || t.at < m.timers[best].at || t.at == m.timers[best].at && t.seq < m.timers[best].seq) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		t := m.timers[best]
		m.timers = slices.Delete(m.timers, best, best+1)
		fire(t.key, t.at)
	}
}

// onTimer is what the tests' timer callbacks do, decided by the timer
// alone so that every copy of a service does the same: now and then
// register a later timer of the same key (which may be due in the same
// call), or delete one.
func onTimer(k int, at int64, register, del func(k int, at int64)) {
	switch h := keygroup.HashInt64(int64(k)*1000+at) % 8; h {
	case 0, 1:
		register(k, at+1+int64(h)*3)
	case 2:
		register(k, at+20)
	case 3:
		del(k, at+2)
	}
}

func genTimerOps(rng *rand.Rand, n int) []testOp {
	var ops []testOp
	var ewm, now int64 = rng.Int64N(100) - 50, 0
	keys := 1 + rng.IntN(6)
	for len(ops) < n {
		switch r := rng.IntN(10); {
		case r < 5:
			at := ewm + rng.Int64N(30) - 5
			proc := rng.IntN(3) == 0
			if proc {
				at = now + rng.Int64N(30) - 5
			}
			ops = append(ops, testOp{kind: opRegister, key: rng.IntN(keys), ts: at, left: proc})
		case r < 6 && len(ops) > 0:
			// delete a timer registered before, or one never registered
			o := ops[rng.IntN(len(ops))]
			if o.kind != opRegister || rng.IntN(4) == 0 {
				o = testOp{key: rng.IntN(keys), ts: ewm + rng.Int64N(20)}
			}
			o.kind = opDelete
			ops = append(ops, o)
		case r < 8:
			ewm += rng.Int64N(8)
			ops = append(ops, testOp{kind: opAdvance, ts: ewm})
		default:
			now += rng.Int64N(8)
			ops = append(ops, testOp{kind: opAdvanceProcessing, ts: now})
		}
	}
	return append(ops, testOp{kind: opAdvance, ts: MaxTime}, testOp{kind: opAdvanceProcessing, ts: MaxTime})
}

// applyTimerOp runs one op on a TimerService and returns the timers that
// fired, in order.
func applyTimerOp(t *TimerService[int], o testOp) []string {
	var out []string
	fire := func(processing bool) func(k int, at int64) {
		return func(k int, at int64) {
			out = append(out, fmt.Sprintf("%d@%d", k, at))
			onTimer(k, at, func(k int, at int64) { t.Register(k, at, processing) }, func(k int, at int64) { t.Delete(k, at, processing) })
		}
	}
	switch o.kind {
	case opRegister:
		t.Register(o.key, o.ts, o.left)
	case opDelete:
		t.Delete(o.key, o.ts, o.left)
	case opAdvance:
		t.AdvanceEvent(o.ts, fire(false))
	case opAdvanceProcessing:
		t.AdvanceProcessing(o.ts, fire(true))
	}
	return out
}

func TestTimersAgainstModel(t *testing.T) {
	t.Parallel()
	fired := 0
	for seed := range seeds(200) {
		rng := rand.New(rand.NewPCG(seed, 11))
		ops := genTimerOps(rng, 50+rng.IntN(300))
		ts := NewTimerService[int]()
		var m timerModel
		for i, o := range ops {
			got := applyTimerOp(ts, o)
			var want []string
			fire := func(processing bool) func(k int, at int64) {
				return func(k int, at int64) {
					want = append(want, fmt.Sprintf("%d@%d", k, at))
					onTimer(k, at, func(k int, at int64) { m.register(k, at, processing) }, func(k int, at int64) { m.delete(k, at, processing) })
				}
			}
			switch o.kind {
			case opRegister:
				m.register(o.key, o.ts, o.left)
			case opDelete:
				m.delete(o.key, o.ts, o.left)
			case opAdvance:
				m.advance(false, o.ts, fire(false))
			case opAdvanceProcessing:
				m.advance(true, o.ts, fire(true))
			}
			fired += len(got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d op %d %v: fired %v, want %v", seed, i, o, got, want)
			}
			if ts.Len() != len(m.timers) {
				t.Fatalf("seed %d op %d %v: %d timers, want %d", seed, i, o, ts.Len(), len(m.timers))
			}
			next, ok := ts.NextProcessing()
			wantNext, wantOK := int64(0), false
			for _, tm := range m.timers {
				if tm.processing && (!wantOK || tm.at < wantNext) {
					wantNext, wantOK = tm.at, true
				}
			}
			if next != wantNext || ok != wantOK {
				t.Fatalf("seed %d op %d: NextProcessing = %d %v, want %d %v", seed, i, next, ok, wantNext, wantOK)
			}
		}
		if ts.Len() != 0 {
			t.Fatalf("seed %d: %d timers left at the end of time", seed, ts.Len())
		}
		// A key without timers keeps no entry: the maps would grow with
		// every key that ever had one.
		if len(ts.loose) != 0 || len(ts.more) != 0 {
			t.Fatalf("seed %d: %d keys and %d more timers left in the maps at the end of time", seed, len(ts.loose), len(ts.more))
		}
	}
	if fired == 0 {
		t.Fatal("no timer fired")
	}
}

func TestTimersOnceInOrder(t *testing.T) {
	ts := NewTimerService[string]()
	ts.Register("b", 5, false)
	ts.Register("a", 5, false)
	ts.Register("a", 3, false)
	ts.Register("b", 5, false) // again: once
	ts.Register("a", 5, true)  // the same time in processing time is another timer
	ts.Register("c", 9, false)
	ts.Register("c", 7, false)
	ts.Delete("c", 9, false)
	var got []string
	fire := func(k string, at int64) {
		got = append(got, fmt.Sprintf("%s %d", k, at))
		if k == "a" && at == 3 {
			ts.Register("d", 4, false) // due in this call
			ts.Register("d", 8, false) // not
		}
	}
	ts.AdvanceEvent(7, fire)
	if want := []string{"a 3", "d 4", "b 5", "a 5", "c 7"}; !slices.Equal(got, want) {
		t.Errorf("fired %v, want %v", got, want)
	}
	got = nil
	ts.Register("e", 2, false) // in the past: runs at the next advance
	ts.AdvanceEvent(7, fire)
	if want := []string{"e 2"}; !slices.Equal(got, want) {
		t.Errorf("fired %v, want %v", got, want)
	}
	if at, ok := ts.NextProcessing(); !ok || at != 5 {
		t.Errorf("NextProcessing = %d %v, want 5", at, ok)
	}
	if at, ok := ts.NextEvent(); !ok || at != 8 {
		t.Errorf("NextEvent = %d %v, want 8", at, ok)
	}
	got = nil
	ts.AdvanceProcessing(100, fire)
	if want := []string{"a 5"}; !slices.Equal(got, want) {
		t.Errorf("fired %v, want %v", got, want)
	}
	if _, ok := ts.NextProcessing(); ok || ts.Len() != 1 {
		t.Errorf("after processing time 100: %d timers left", ts.Len())
	}
}

// TestTimersDeletedAreCompacted checks that the heap entries of deleted
// timers do not pile up, and that the timers left still run in order,
// once each, with re-registered ones at their new place.
func TestTimersDeletedAreCompacted(t *testing.T) {
	ts := NewTimerService[int]()
	const n = 5000
	for k := range n {
		ts.Register(k, int64(n-k), false)
		ts.Register(k, int64(2*n+k), false) // a second timer of the key
	}
	for k := range n {
		if k%10 != 0 {
			ts.Delete(k, int64(n-k), false)
			ts.Delete(k, int64(2*n+k), false)
		}
	}
	ts.Register(1, int64(n-1), false) // deleted and set again
	if len(ts.event) > 2*ts.Len()+1024 {
		t.Fatalf("%d heap entries for %d timers: the deleted ones were not compacted", len(ts.event), ts.Len())
	}
	var got []int64
	ts.AdvanceEvent(MaxTime, func(k int, at int64) { got = append(got, at) })
	if len(got) != 2*n/10+1 || !slices.IsSorted(got) || ts.Len() != 0 || len(ts.event) != 0 {
		t.Fatalf("fired %d timers (sorted: %v), %d left, %d heap entries; want %d", len(got), slices.IsSorted(got), ts.Len(), len(ts.event), 2*n/10+1)
	}
}

// timerEngine is a TimerService under the restore test.
type timerEngine struct{ t *TimerService[int] }

func (e *timerEngine) apply(o testOp) []string { return applyTimerOp(e.t, o) }
func (e *timerEngine) len() int                { return e.t.Len() }

func (e *timerEngine) snapshot(sec *state.Sections, keyGroup func(int) int) error {
	return e.t.Snapshot(sec, keyGroup, encTestKey)
}

func (e *timerEngine) restore(section []byte) error { return e.t.Restore(section, decTestKey) }

func TestTimersRestore(t *testing.T) {
	t.Parallel()
	for seed := range seeds(100) {
		rng := rand.New(rand.NewPCG(seed, 12))
		ops := genTimerOps(rng, 50+rng.IntN(300))
		checkRestores(t, fmt.Sprintf("timers seed %d", seed), rng, ops, func() testEngine {
			return &timerEngine{NewTimerService[int]()}
		})
	}
}

func TestTimersRestoreErrors(t *testing.T) {
	ts := NewTimerService[int]()
	ts.Register(1, 10, false)
	sec := state.NewSections(0, testMaxParallelism)
	if err := ts.Snapshot(sec, testKeyGroup, encTestKey); err != nil {
		t.Fatal(err)
	}
	data := sec.W[testKeyGroup(1)].Bytes()
	r := NewTimerService[int]()
	if err := r.Restore(data, decTestKey); err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(data, decTestKey); err == nil {
		t.Error("a timer restored twice is no error")
	}
	header := len(sec.W[(testKeyGroup(1)+1)%testMaxParallelism].Bytes())
	for n := 1; n < len(data); n++ {
		if err := NewTimerService[int]().Restore(data[:n], decTestKey); err == nil && n != header {
			t.Errorf("a section cut to %d of %d bytes is no error", n, len(data))
		}
	}
}

// keptTimers is a TimerService that keeps its timers with the entries of
// a keyed state (KeepWith), used as a process operator uses them: every
// call looks its key's value up and passes the entry's aux word. Now and
// then a key's state is deleted (ctx.Clear), which leaves its timers set.
type keptTimers struct {
	t  *TimerService[int]
	st *state.Memory[int, int]
}

func newKeptTimers() *keptTimers {
	k := &keptTimers{t: NewTimerService[int](), st: state.NewMemory[int, int]()}
	k.t.KeepWith(k.st)
	return k
}

// call runs f with a copy of the aux word of key's entry, which it makes
// if key has none, and writes the copy back after it, as the generated
// code does around a call of the process function (ProcessContext.BeginIn).
func (k *keptTimers) call(key int, f func(slot *uint64)) {
	v, ref := k.st.GetOrAddRef(key)
	*v++
	aux := ref.Aux()
	f(&aux)
	ref.SetAux(aux)
}

// clear deletes k's state after some calls, decided by the key and the
// time alone, so that every copy does the same.
func (k *keptTimers) clear(key int, at int64) {
	if keygroup.HashInt64(int64(key)*7919+at)%3 == 0 {
		k.st.Delete(key)
	}
}

func (k *keptTimers) apply(o testOp) []string {
	var out []string
	fire := func(processing bool) func(key int, at int64) {
		return func(key int, at int64) {
			out = append(out, fmt.Sprintf("%d@%d", key, at))
			k.call(key, func(slot *uint64) {
				onTimer(key, at, func(key int, at int64) { k.t.RegisterIn(key, slot, at, processing) }, func(key int, at int64) { k.t.DeleteIn(key, slot, at, processing) })
			})
			k.clear(key, at)
		}
	}
	switch o.kind {
	case opRegister:
		k.call(o.key, func(slot *uint64) { k.t.RegisterIn(o.key, slot, o.ts, o.left) })
		k.clear(o.key, o.ts)
	case opDelete:
		k.call(o.key, func(slot *uint64) { k.t.DeleteIn(o.key, slot, o.ts, o.left) })
		k.clear(o.key, o.ts)
	case opAdvance:
		k.t.AdvanceEvent(o.ts, fire(false))
	case opAdvanceProcessing:
		k.t.AdvanceProcessing(o.ts, fire(true))
	}
	return out
}

func (k *keptTimers) len() int { return k.t.Len() }

func (k *keptTimers) snapshot(sec *state.Sections, keyGroup func(int) int) error {
	return k.t.Snapshot(sec, keyGroup, encTestKey)
}

func (k *keptTimers) restore(section []byte) error { return k.t.Restore(section, decTestKey) }

// TestTimersKeptWithState: timers kept with the keys' state entries, some
// of which are deleted while their keys have timers, run as the model's
// do, and as a service's that keeps them in maps.
func TestTimersKeptWithState(t *testing.T) {
	t.Parallel()
	fired := 0
	for seed := range seeds(200) {
		rng := rand.New(rand.NewPCG(seed, 13))
		ops := genTimerOps(rng, 50+rng.IntN(300))
		kept, plain := newKeptTimers(), NewTimerService[int]()
		for i, o := range ops {
			got, want := kept.apply(o), applyTimerOp(plain, o)
			fired += len(got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d op %d %v: fired %v, want %v", seed, i, o, got, want)
			}
			if kept.len() != plain.Len() || timerList(kept.t) != timerList(plain) {
				t.Fatalf("seed %d op %d %v: timers %s, want %s", seed, i, o, timerList(kept.t), timerList(plain))
			}
		}
		if len(kept.t.loose) != 0 || len(kept.t.more) != 0 {
			t.Fatalf("seed %d: %d loose keys and %d more timers left at the end of time", seed, len(kept.t.loose), len(kept.t.more))
		}
		// A call without the key's entry would miss its timers.
		func() {
			defer func() {
				if recover() == nil {
					t.Error("Register on a service whose timers are kept with the state did not panic")
				}
			}()
			kept.t.Register(1, 1, false)
		}()
	}
	if fired == 0 {
		t.Fatal("no timer fired")
	}
}

func TestTimersKeptWithStateRestore(t *testing.T) {
	t.Parallel()
	for seed := range seeds(100) {
		rng := rand.New(rand.NewPCG(seed, 14))
		ops := genTimerOps(rng, 50+rng.IntN(300))
		checkRestores(t, fmt.Sprintf("kept timers seed %d", seed), rng, ops, func() testEngine { return newKeptTimers() })
	}
}

func (k *keptTimers) snapshotDelta(sec *state.Sections, keyGroup func(int) int, d Delta) (uint64, error) {
	return k.t.SnapshotDelta(sec, keyGroup, encTestKey, d)
}

func (k *keptTimers) restoreSection(section []byte, delta bool) error {
	return k.t.RestoreSection(section, delta, decTestKey)
}

func (k *keptTimers) endChain() error { return k.t.EndChain() }
func (k *keptTimers) epoch() uint64   { return k.t.Epoch() }
func (k *keptTimers) track()          { k.t.Track() }

// TestTimersKeptWithStateDeltaChains: deltas of timers kept with the
// state, whose records are freed and used again by other keys, restore
// what the checkpoints held.
func TestTimersKeptWithStateDeltaChains(t *testing.T) {
	t.Parallel()
	crashes := 0
	for seed := range seeds(150) {
		rng := rand.New(rand.NewPCG(seed, 22))
		ops := genTimerOps(rng, 100+rng.IntN(300))
		crashes += checkDeltaChains(t, fmt.Sprintf("kept timers seed %d", seed), rng, ops, func() deltaEngine { return newKeptTimers() })
	}
	if crashes == 0 {
		t.Error("no run crashed and restored")
	}
}
