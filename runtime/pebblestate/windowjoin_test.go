package pebblestate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

type memWindowJoin = eventtime.WindowJoin[int64, value, string]

// windowJoinRig runs a window join on sliding windows or sessions with
// allowed lateness of one node at some parallelism on both backends side
// by side: pebble WindowJoin per subtask, and a memory WindowJoin per
// subtask as the model.
type windowJoinRig struct {
	t      *testing.T
	fsys   vfs.FS
	stor   *storage.Storage
	p      int
	assign eventtime.WindowAssigner
	joins  []*WindowJoin[int64, value, string]
	models []*memWindowJoin
	keys   [][]int64
	wm     int64
	id     int64
	n      int
	rng    *rand.Rand
	// small makes the stores' caches small, so that windows are written
	// and read back between barriers.
	small bool
	// memoryForm is set once a checkpoint of the memory backend's form
	// was taken (a savepoint, or the memory backend's).
	memoryForm bool
	// seen counts what the memory model did: records late, records that
	// merged sessions, pairs of windows that had fired (records within
	// the allowed lateness), and pairs of sessions that had fired and
	// grew or merged since.
	seen struct{ late, merges, latePairs, regrown, pending int }
	// fired holds, per subtask and key, the windows that have fired: a
	// session that overlaps one of them has grown or merged since.
	fired []map[int64][]eventtime.Window
	// keyOf is the key of each left record, by its N.
	keyOf map[int64]int64
}

// rigSessionAssigner is the window join rig's sessions: a gap of 80ms.
var rigSessionAssigner = eventtime.WindowAssigner{Kind: eventtime.Session, Gap: 80}

// side is what the rig does with the store of a join.
func (j *WindowJoin[K, L, R]) side() rigSide {
	switch w := j.win.(type) {
	case trigWindows[K, eventtime.JoinRecords[L, R]]:
		return keyedSide(rigSide{}, w.store)
	case trigSessions[K, eventtime.JoinRecords[L, R]]:
		return keyedSide(rigSide{}, w.store)
	}
	panic("unknown windows")
}

// joinWindow is a key's window.
type joinWindow struct {
	k int64
	w eventtime.Window
}

type windowPair struct {
	l value
	r string
	w eventtime.Window
}

func newWindowJoinModel(a eventtime.WindowAssigner) *memWindowJoin {
	return eventtime.NewWindowJoin[int64, value, string](a, rigLateness)
}

func (r *windowJoinRig) open(p int, restore int64, models []*memWindowJoin) {
	r.t.Helper()
	r.close()
	cp := checkpoint.New(context.Background(), rigConfig(p), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: r.t.Logf})
	if restore > 0 {
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", restore), false, true); err != nil {
			r.t.Fatal(err)
		}
	}
	r.p, r.joins, r.keys = p, nil, make([][]int64, p)
	for sub := range p {
		j := OpenWindowJoin(cp.Task(0, sub), 0, r.assign, rigLateness, testCodec, encRight, decRight)
		if r.small {
			j.side().small()
		}
		r.joins = append(r.joins, j)
	}
	if err := cp.RunRestores(); err != nil {
		r.t.Fatal(err)
	}
	r.models = models
	r.fired = make([]map[int64][]eventtime.Window, p)
	for sub := range p {
		r.fired[sub] = map[int64][]eventtime.Window{}
	}
	for k := range int64(30) {
		kg := joinKeyGroup(k)
		for sub := range p {
			if start, end := keygroup.Range(sub, rigMaxP, p); kg >= start && kg < end {
				r.keys[sub] = append(r.keys[sub], k)
			}
		}
	}
}

func (r *windowJoinRig) close() {
	for _, j := range r.joins {
		j.side().close()
	}
	r.joins = nil
}

// step adds ops random records to either side (some late, some within
// the allowed lateness of windows that fired) and moves the watermark now
// and then, on both backends, and compares what they emit.
func (r *windowJoinRig) step(ops int) {
	r.t.Helper()
	for range ops {
		sub := r.rng.IntN(r.p)
		if r.rng.IntN(20) == 0 {
			r.wm += r.rng.Int64N(60)
			r.advance()
			continue
		}
		if len(r.keys[sub]) == 0 {
			continue
		}
		k := r.keys[sub][r.rng.IntN(len(r.keys[sub]))]
		ts := r.wm - 150 + r.rng.Int64N(400)
		r.n++
		before := r.models[sub].Len()
		var okGot, okWant bool
		if r.rng.IntN(2) == 0 {
			l := value{N: int64(r.n), Name: fmt.Sprint("l", r.n)}
			r.keyOf[l.N] = k
			okGot = r.joins[sub].AddLeft(k, l, ts, r.wm)
			okWant = r.models[sub].AddLeft(k, l, ts, r.wm)
		} else {
			s := fmt.Sprint("r", r.n)
			okGot = r.joins[sub].AddRight(k, s, ts, r.wm)
			okWant = r.models[sub].AddRight(k, s, ts, r.wm)
		}
		if okGot != okWant {
			r.t.Fatalf("subtask %d: record of key %d at %d, watermark %d: pebble %v, memory %v", sub, k, ts, r.wm, okGot, okWant)
		}
		if !okWant {
			r.seen.late++
		}
		if r.models[sub].Len() < before {
			r.seen.merges++
		}
	}
}

func (r *windowJoinRig) advance() {
	r.t.Helper()
	for sub := range r.p {
		var got, want []windowPair
		r.joins[sub].Advance(r.wm, func(l value, s string, w eventtime.Window) { got = append(got, windowPair{l, s, w}) })
		r.models[sub].Advance(r.wm, func(l value, s string, w eventtime.Window) { want = append(want, windowPair{l, s, w}) })
		if !slices.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			r.t.Fatalf("subtask %d at watermark %d: pebble emitted %d pairs, memory %d; the first that differ, pair %d: pebble %v, memory %v", sub, r.wm, len(got), len(want), i, got[i:min(i+5, len(got))], want[i:min(i+5, len(want))])
		}
		fired := r.fired[sub]
		var now []joinWindow
		for _, p := range want {
			k := r.keyOf[p.l.N]
			switch {
			case slices.Contains(fired[k], p.w):
				r.seen.latePairs++
			case r.assign.Kind == eventtime.Session && slices.ContainsFunc(fired[k], func(w eventtime.Window) bool { return w.Start < p.w.End && p.w.Start < w.End }):
				r.seen.regrown++
			}
			now = append(now, joinWindow{k, p.w})
		}
		for _, kw := range now {
			if !slices.Contains(fired[kw.k], kw.w) {
				fired[kw.k] = append(fired[kw.k], kw.w)
			}
		}
		if got, want := r.joins[sub].Len(), r.models[sub].Len(); got != want {
			r.t.Fatalf("subtask %d at watermark %d: pebble has %d windows, memory %d", sub, r.wm, got, want)
		}
	}
}

// feedFired adds a left record to a window that has fired on each
// subtask, at its start (a session does not grow then), on both
// backends: a checkpoint
// taken next holds fired windows with records not paired yet, which a
// restore must mark (the memory backend's form: a savepoint, or a
// checkpoint of the memory backend).
func (r *windowJoinRig) feedFired() {
	r.t.Helper()
	for sub, m := range r.models {
		sec := state.NewSections(0, rigMaxP)
		if err := m.Snapshot(sec, joinKeyGroup, testCodec.EncodeKey, testCodec.EncodeValue, encRight); err != nil {
			r.t.Fatal(err)
		}
		var fired []joinWindow
		for kg := range sec.W {
			// The accumulators are read, not kept: a section of windows
			// has them one after the other, each as long as it reads.
			decAcc := func(r *codec.Reader) *struct{} {
				eventtime.DecodeJoinRecords(r, testCodec.DecodeValue, decRight)
				return nil
			}
			_, _, _, err := eventtime.ReadWindows(sec.W[kg].Bytes(), testCodec.DecodeKey, decAcc,
				func(k int64, w eventtime.Window, _ uint64, f bool, _ *struct{}) error {
					if f {
						fired = append(fired, joinWindow{k, w})
					}
					return nil
				})
			if err != nil {
				r.t.Fatal(err)
			}
		}
		// One window per subtask: the memory backend orders the windows
		// with new pairs by end, then creation number, and after a
		// restore at another parallelism windows of the same end from
		// different subtasks may have the same number, which memory and
		// pebble order differently.
		if len(fired) > 1 {
			fired = fired[:1]
		}
		for _, kw := range fired {
			r.n++
			l := value{N: int64(r.n), Name: fmt.Sprint("l", r.n)}
			r.keyOf[l.N] = kw.k
			okGot := r.joins[sub].AddLeft(kw.k, l, kw.w.Start, r.wm)
			okWant := m.AddLeft(kw.k, l, kw.w.Start, r.wm)
			if !okGot || !okWant {
				r.t.Fatalf("subtask %d: a record at the start of fired window %v of key %d, watermark %d: pebble took it %v, memory %v", sub, kw.w, kw.k, r.wm, okGot, okWant)
			}
			r.seen.pending++
		}
	}
}

// checkpoint takes a checkpoint of every subtask's join while records
// keep coming, and returns copies of the models at the barrier. The
// subtasks take it at the same watermark, as aligned barriers make them
// do: a restore at another parallelism then merges windows that fired on
// every old subtask or on none. (With watermarks that differ, memory
// keeps whether a window fired per window of all keys, and a new key's
// window within the allowed lateness counts as fired, or not, as the
// first restored key's did; pebble keeps it per key and window.)
func (r *windowJoinRig) checkpoint(savepoint bool) []*memWindowJoin {
	r.t.Helper()
	r.id++
	id := r.id
	if err := r.stor.Prepare(id); err != nil {
		r.t.Fatal(err)
	}
	if savepoint {
		r.feedFired()
		r.memoryForm = true
	}
	var models []*memWindowJoin
	files := make([][]storage.StateFile, len(r.joins))
	errs := make([]error, len(r.joins))
	done := make(chan int)
	for sub, j := range r.joins {
		models = append(models, r.split([]*memWindowJoin{r.models[sub]}, 0, rigMaxP))
		write := j.side().begin(r.stor, id, savepoint)
		go func() {
			files[sub], _, errs[sub] = write()
			done <- sub
		}()
	}
	wm := r.wm
	r.step(100)
	r.wm = wm
	var all []storage.StateFile
	for range r.joins {
		<-done
	}
	for sub := range r.joins {
		if errs[sub] != nil {
			r.t.Fatal(errs[sub])
		}
		all = append(all, files[sub]...)
	}
	(&joinRig{t: r.t, stor: r.stor, p: r.p}).commit(id, all)
	return models
}

// split restores the key groups [start, end) of the models' snapshots
// (models[i] is subtask i of len(models)) into a new model, as the memory
// backend does.
func (r *windowJoinRig) split(models []*memWindowJoin, start, end int) *memWindowJoin {
	r.t.Helper()
	c := newWindowJoinModel(r.assign)
	for i, m := range models {
		sec := state.NewSections(0, rigMaxP)
		if err := m.Snapshot(sec, joinKeyGroup, testCodec.EncodeKey, testCodec.EncodeValue, encRight); err != nil {
			r.t.Fatal(err)
		}
		lo, hi := keygroup.Range(i, rigMaxP, len(models))
		for kg := max(start, lo); kg < min(end, hi); kg++ {
			if err := c.Restore(sec.W[kg].Bytes(), testCodec.DecodeKey, testCodec.DecodeValue, decRight); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	return c
}

func (r *windowJoinRig) rescale(models []*memWindowJoin, p int) []*memWindowJoin {
	var out []*memWindowJoin
	for sub := range p {
		start, end := keygroup.Range(sub, rigMaxP, p)
		out = append(out, r.split(models, start, end))
	}
	return out
}

func newWindowJoinRig(t *testing.T, a eventtime.WindowAssigner, p int, small bool, seed uint64) *windowJoinRig {
	fsys := vfs.NewMem()
	r := &windowJoinRig{t: t, fsys: fsys, stor: &storage.Storage{FS: fsys, Dir: "/ckpt"}, assign: a, rng: rand.New(rand.NewPCG(seed, 10)), small: small, keyOf: map[int64]int64{}}
	var models []*memWindowJoin
	for range p {
		models = append(models, newWindowJoinModel(a))
	}
	r.open(p, 0, models)
	t.Cleanup(r.close)
	return r
}

// joinKinds are the windows the window join tests run on, and the seeds
// of their random workloads.
var joinKinds = []struct {
	name   string
	assign eventtime.WindowAssigner
	seeds  []uint64
}{{"sliding", rigAssigner, []uint64{9}}, {"sessions", rigSessionAssigner, []uint64{9, 1, 2}}}

// checkSeen fails the test when the workload lacked what it is meant to
// test: late records, pairs of windows within their allowed lateness,
// and for sessions records that merge sessions and sessions that fire
// again after they grew or merged.
func (r *windowJoinRig) checkSeen() {
	r.t.Helper()
	s := r.seen
	r.t.Logf("seen: %d late records, %d records merging sessions, %d pairs of fired windows, %d pairs of sessions that grew after they fired, %d records in fired windows before a checkpoint of the memory form", s.late, s.merges, s.latePairs, s.regrown, s.pending)
	if s.late == 0 || s.latePairs == 0 || r.assign.Kind == eventtime.Session && (s.merges == 0 || s.regrown == 0) || r.memoryForm && s.pending == 0 {
		r.t.Fatalf("the workload lacks late records, pairs within the allowed lateness, or merges of sessions: %+v", s)
	}
}

// TestWindowJoinAsMemory adds random records to both sides of a window
// join on sliding windows or sessions with allowed lateness, on the
// pebble backend (with a small cache) and on the memory one: the same
// records are late, and the same pairs come out in the same order, those
// of records within the lateness of windows that fired included, and of
// sessions that merged. Checkpoints taken while records keep coming
// restore (the store linked back) into joins that go on as the memory
// backend's restored at the barrier.
func TestWindowJoinAsMemory(t *testing.T) {
	for _, kind := range joinKinds {
		for _, seed := range kind.seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", kind.name, seed), func(t *testing.T) {
				r := newWindowJoinRig(t, kind.assign, 1, true, seed)
				for range 5 {
					r.step(2000)
					models := r.checkpoint(false)
					r.open(1, r.id, models)
				}
				r.step(2000)
				r.wm = eventtime.MaxTime
				r.advance()
				r.checkSeen()
			})
		}
	}
}

// TestWindowJoinRescale restores checkpoints of pebble window joins at
// other parallelisms (2 to 3, 3 to 1), a savepoint (WindowJoin's form) on
// memory and on pebble, and a checkpoint of the memory backend on pebble.
func TestWindowJoinRescale(t *testing.T) {
	for _, kind := range joinKinds {
		for _, seed := range kind.seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", kind.name, seed), func(t *testing.T) { testWindowJoinRescale(t, kind.assign, seed) })
		}
	}
}

func testWindowJoinRescale(t *testing.T, a eventtime.WindowAssigner, seed uint64) {
	r := newWindowJoinRig(t, a, 2, false, seed)
	r.step(2000)
	models := r.checkpoint(false)
	t.Log("2 -> 3")
	r.open(3, r.id, r.rescale(models, 3))
	r.step(2000)
	models = r.checkpoint(true)
	// The savepoint on memory: the same windows and pairs as the models'.
	for sub := range 2 {
		cp := checkpoint.New(context.Background(), rigConfig(2), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: t.Logf})
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", r.id), false, true); err != nil {
			t.Fatal(err)
		}
		m := newWindowJoinModel(a)
		checkpoint.RestoreKeyed(cp.Task(0, sub), 0, "", func(sec []byte) error {
			return m.Restore(sec, testCodec.DecodeKey, testCodec.DecodeValue, decRight)
		})
		if err := cp.RunRestores(); err != nil {
			t.Fatal(err)
		}
		want := r.rescale(models, 2)[sub]
		// A late right record for every key, then the end: the same pairs.
		for _, k := range r.keysOf(sub) {
			m.AddRight(k, "probe", want.Watermark()-10, want.Watermark())
			want.AddRight(k, "probe", want.Watermark()-10, want.Watermark())
		}
		var got, exp []windowPair
		m.Advance(eventtime.MaxTime, func(l value, s string, w eventtime.Window) { got = append(got, windowPair{l, s, w}) })
		want.Advance(eventtime.MaxTime, func(l value, s string, w eventtime.Window) { exp = append(exp, windowPair{l, s, w}) })
		if len(exp) == 0 || m.Watermark() != want.Watermark() || !slices.Equal(got, exp) {
			t.Fatalf("subtask %d of the savepoint on memory: watermark %d, pairs %v; want %d, %v", sub, m.Watermark(), got, want.Watermark(), exp)
		}
	}
	t.Log("savepoint -> 2")
	r.open(2, r.id, r.rescale(models, 2))
	r.step(2000)
	models = r.checkpoint(false)
	t.Log("2 -> 1")
	r.open(1, r.id, r.rescale(models, 1))
	r.step(2000)
	// A checkpoint of the memory backend on pebble, at another
	// parallelism.
	r.id++
	if err := r.stor.Prepare(r.id); err != nil {
		t.Fatal(err)
	}
	r.feedFired()
	var files []storage.StateFile
	for sub, m := range r.models {
		start, end := keygroup.Range(sub, rigMaxP, r.p)
		sec := state.NewSections(start, end)
		if err := m.Snapshot(sec, joinKeyGroup, testCodec.EncodeKey, testCodec.EncodeValue, encRight); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("proc-%d.state", sub)
		w, err := r.stor.CreateState(r.id, name, start, end-start)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sec.W {
			w.Section(sec.W[i].Bytes())
		}
		size, crc, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, storage.StateFile{Subtask: sub, Name: name, KeyGroups: [2]int{start, end}, Size: size, CRC: crc})
	}
	(&joinRig{t: t, stor: r.stor, p: r.p}).commit(r.id, files)
	t.Log("memory 1 -> 2")
	r.open(2, r.id, r.rescale(r.models, 2))
	r.step(2000)
	r.wm = eventtime.MaxTime
	r.advance()
	r.checkSeen()
}

// keysOf are the test's keys of subtask sub of 2.
func (r *windowJoinRig) keysOf(sub int) []int64 {
	var ks []int64
	start, end := keygroup.Range(sub, rigMaxP, 2)
	for k := range int64(30) {
		if kg := joinKeyGroup(k); kg >= start && kg < end {
			ks = append(ks, k)
		}
	}
	return ks
}
