package pebblestate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// windowRig runs the sliding windows or the sessions (with allowed
// lateness) of one node at some parallelism on both backends side by
// side: pebble Windows or Sessions per subtask, and a memory WindowState
// per subtask as the model.
type windowRig struct {
	t      *testing.T
	fsys   vfs.FS
	stor   *storage.Storage
	p      int
	kind   rigKind
	wins   []rigSide
	models []*eventtime.WindowState[int64, value]
	keys   [][]int64
	exact  bool
	// seen counts what the memory model did: records late, updates of
	// fired windows, firings, and results of merged sessions.
	seen struct{ late, updates, fires, merged int }
	wm   int64
	id   int64
	rng  *rand.Rand
}

// rigKind is what windows a rig runs.
type rigKind int

const (
	rigSliding rigKind = iota
	// rigSessions: sessions with a gap of 80ms.
	rigSessions
	// rigGaps: sessions with a gap per record, from 1 to 150ms.
	rigGaps
)

var rigAssigner = eventtime.WindowAssigner{Kind: eventtime.Sliding, Size: 100, Slide: 50}

func (k rigKind) assigner() eventtime.WindowAssigner {
	switch k {
	case rigSessions:
		return eventtime.WindowAssigner{Kind: eventtime.Session, Gap: 80}
	case rigGaps:
		return eventtime.WindowAssigner{Kind: eventtime.Session, DynamicGap: true}
	}
	return rigAssigner
}

const rigLateness = 60

// mergeValues merges sessions' accumulators; the name tells the order in
// which they were merged.
func mergeValues(dst, src *value) {
	dst.N += src.N
	dst.Name = fmt.Sprintf("%.20s|%.20s", dst.Name, src.Name)
}

func (k rigKind) model() *eventtime.WindowState[int64, value] {
	if k == rigSliding {
		return eventtime.NewWindowState[int64, value](rigAssigner, rigLateness, nil)
	}
	return eventtime.NewWindowState[int64, value](k.assigner(), rigLateness, mergeValues)
}

func newModel() *eventtime.WindowState[int64, value] { return rigSliding.model() }

// rigSide is one subtask's pebble windows in a rig, and what the rig does
// with their store.
type rigSide struct {
	add        func(k, ts, gap, wm int64, add func(*value), onUpdate func(int64, eventtime.Window, *value)) bool
	advance    func(wm int64, fire func(int64, eventtime.Window, *value))
	close      func()
	small      func()
	checkpoint func(stor *storage.Storage, id int64, savepoint bool, during func()) ([]storage.StateFile, error)
	// begin takes the barrier of a checkpoint and returns what writes it,
	// which may run while records keep coming.
	begin func(stor *storage.Storage, id int64, savepoint bool) (write func() (files []storage.StateFile, written int64, err error))
}

// keyedSide fills in what a rig does with store st.
func keyedSide[K comparable, V any](side rigSide, st *Keyed[K, V]) rigSide {
	side.close = st.close
	side.small = func() { st.spillAt, st.maxCache = 16, 64 }
	side.begin = func(stor *storage.Storage, id int64, savepoint bool) func() ([]storage.StateFile, int64, error) {
		for _, p := range st.parts {
			p.barrier()
		}
		c, base := st.begin(id, id-1)
		c.savepoint = savepoint
		return func() ([]storage.StateFile, int64, error) {
			return st.write(c, base, stor)
		}
	}
	side.checkpoint = func(stor *storage.Storage, id int64, savepoint bool, during func()) ([]storage.StateFile, error) {
		write := side.begin(stor, id, savepoint)
		var files []storage.StateFile
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			files, _, err = write()
		}()
		during()
		<-done
		return files, err
	}
	return side
}

func (k rigKind) open(t *checkpoint.Task) rigSide {
	if k == rigSliding {
		w := OpenWindows(t, 0, rigAssigner, rigLateness, testCodec)
		return keyedSide(rigSide{
			add: func(k, ts, _, wm int64, add func(*value), onUpdate func(int64, eventtime.Window, *value)) bool {
				return w.Add(k, ts, wm, add, onUpdate)
			},
			advance: w.Advance,
		}, w.store)
	}
	w := OpenSessions(t, 0, k.assigner(), rigLateness, mergeValues, testCodec)
	return keyedSide(rigSide{
		add: func(key, ts, gap, wm int64, add func(*value), onUpdate func(int64, eventtime.Window, *value)) bool {
			if k == rigGaps {
				return w.AddGap(key, ts, gap, wm, add, onUpdate)
			}
			return w.Add(key, ts, wm, add, onUpdate)
		},
		advance: w.Advance,
	}, w.store)
}

func (r *windowRig) open(p int, restore int64, models []*eventtime.WindowState[int64, value]) {
	r.t.Helper()
	r.close()
	cp := checkpoint.New(context.Background(), rigConfig(p), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: r.t.Logf})
	if restore > 0 {
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", restore), false, true); err != nil {
			r.t.Fatal(err)
		}
	}
	r.p, r.wins, r.keys = p, nil, make([][]int64, p)
	for sub := range p {
		r.wins = append(r.wins, r.kind.open(cp.Task(0, sub)))
	}
	if err := cp.RunRestores(); err != nil {
		r.t.Fatal(err)
	}
	r.models = models
	for k := range int64(100) {
		kg := keygroup.Of(testCodec.Hash(k), rigMaxP)
		for sub := range p {
			if start, end := keygroup.Range(sub, rigMaxP, p); kg >= start && kg < end {
				r.keys[sub] = append(r.keys[sub], k)
			}
		}
	}
}

func (r *windowRig) close() {
	for _, w := range r.wins {
		w.close()
	}
	r.wins = nil
}

type emitted struct {
	k      int64
	w      eventtime.Window
	acc    value
	update bool
}

// step adds ops random records and moves the watermark now and then, on
// both backends, and compares what they emit.
func (r *windowRig) step(ops int) {
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
		add := func(a *value) { a.N++; a.Name = fmt.Sprintf("%.20s%d", a.Name, ts%10) }
		var got, want []emitted
		gap := 1 + r.rng.Int64N(150)
		okGot := r.wins[sub].add(k, ts, gap, r.wm, add, func(k int64, w eventtime.Window, a *value) { got = append(got, emitted{k, w, *a, true}) })
		var okWant bool
		if r.kind == rigGaps {
			okWant = r.models[sub].AddGap(k, ts, gap, r.wm, add, func(k int64, w eventtime.Window, a *value) { want = append(want, emitted{k, w, *a, true}) })
		} else {
			okWant = r.models[sub].Add(k, ts, r.wm, add, func(k int64, w eventtime.Window, a *value) { want = append(want, emitted{k, w, *a, true}) })
		}
		r.count(!okWant, want)
		if okGot != okWant || !slices.Equal(got, want) {
			r.t.Fatalf("subtask %d: Add(%d, %d) at watermark %d: pebble %v %v, memory %v %v", sub, k, ts, r.wm, okGot, got, okWant, want)
		}
	}
}

func (r *windowRig) count(late bool, out []emitted) {
	if late {
		r.seen.late++
	}
	for _, e := range out {
		if e.update {
			r.seen.updates++
		} else {
			r.seen.fires++
		}
		if strings.Contains(e.acc.Name, "|") {
			r.seen.merged++
		}
	}
}

// checkSeen fails the test when the workload missed a case.
func (r *windowRig) checkSeen() {
	r.t.Helper()
	s := r.seen
	if s.late == 0 || s.updates == 0 || s.fires == 0 || r.kind != rigSliding && s.merged == 0 {
		r.t.Fatalf("the workload missed a case: %+v", s)
	}
	r.t.Logf("%+v", s)
}

func (r *windowRig) advance() {
	r.t.Helper()
	for sub := range r.p {
		var got, want []emitted
		r.wins[sub].advance(r.wm, func(k int64, w eventtime.Window, a *value) { got = append(got, emitted{k, w, *a, false}) })
		r.models[sub].Advance(r.wm, func(k int64, w eventtime.Window, a *value) { want = append(want, emitted{k, w, *a, false}) })
		r.count(false, want)
		if !r.exact {
			less := func(a, b emitted) int {
				if a.w.End != b.w.End {
					return int(a.w.End - b.w.End)
				}
				return int(a.k - b.k)
			}
			slices.SortFunc(got, less)
			slices.SortFunc(want, less)
		}
		if !slices.Equal(got, want) {
			r.t.Fatalf("subtask %d at watermark %d: pebble fired %v, memory %v", sub, r.wm, got, want)
		}
	}
}

// checkpoint takes a checkpoint of every subtask's windows while records
// keep coming, and returns copies of the models at the barrier.
func (r *windowRig) checkpoint(savepoint bool) []*eventtime.WindowState[int64, value] {
	r.t.Helper()
	r.id++
	id := r.id
	if err := r.stor.Prepare(id); err != nil {
		r.t.Fatal(err)
	}
	var models []*eventtime.WindowState[int64, value]
	var all []storage.StateFile
	for sub, w := range r.wins {
		models = append(models, r.split([]*eventtime.WindowState[int64, value]{r.models[sub]}, 0, rigMaxP))
		files, err := w.checkpoint(r.stor, id, savepoint, func() {
			wm := r.wm
			r.step(100)
			r.wm = wm
		})
		if err != nil {
			r.t.Fatal(err)
		}
		all = append(all, files...)
	}
	m := &storage.Manifest{ID: id, Job: "p", MaxParallelism: rigMaxP, Mode: config.ExactlyOnce,
		Nodes: []storage.NodeState{{UID: "proc", Name: "proc", Kind: "process", Parallelism: r.p, Files: all,
			KeySchema: testCodec.KeySchema, ValueSchema: testCodec.ValueSchema}}}
	if err := r.stor.Commit(m); err != nil {
		r.t.Fatal(err)
	}
	return models
}

// split restores the key groups [start, end) of the models' snapshots
// (models[i] is subtask i of len(models)) into a new model, as the memory
// backend does.
func (r *windowRig) split(models []*eventtime.WindowState[int64, value], start, end int) *eventtime.WindowState[int64, value] {
	r.t.Helper()
	c := r.kind.model()
	for i, m := range models {
		sec := state.NewSections(0, rigMaxP)
		if err := m.Snapshot(sec, func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }, testCodec.EncodeKey, testCodec.EncodeValue); err != nil {
			r.t.Fatal(err)
		}
		// Only the key groups model i owned: its file holds no others.
		lo, hi := keygroup.Range(i, rigMaxP, len(models))
		for kg := max(start, lo); kg < min(end, hi); kg++ {
			if err := c.Restore(sec.W[kg].Bytes(), testCodec.DecodeKey, testCodec.DecodeValue); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	return c
}

func (r *windowRig) rescale(models []*eventtime.WindowState[int64, value], p int) []*eventtime.WindowState[int64, value] {
	var out []*eventtime.WindowState[int64, value]
	for sub := range p {
		start, end := keygroup.Range(sub, rigMaxP, p)
		out = append(out, r.split(models, start, end))
	}
	return out
}

func newWindowRig(t *testing.T, p int) *windowRig { return newRig(t, p, rigSliding) }

func newRig(t *testing.T, p int, kind rigKind) *windowRig {
	fsys := vfs.NewMem()
	r := &windowRig{t: t, fsys: fsys, stor: &storage.Storage{FS: fsys, Dir: "/ckpt"}, kind: kind, exact: true, rng: rand.New(rand.NewPCG(5, 6)), wm: eventtime.MinTime}
	var models []*eventtime.WindowState[int64, value]
	for range p {
		models = append(models, kind.model())
	}
	r.open(p, 0, models)
	r.wm = 0
	t.Cleanup(r.close)
	return r
}

// TestWindowsAsMemory adds random records (some late, some within the
// allowed lateness of fired windows) to sliding windows on the pebble
// backend and on the memory one, with a small cache: the same windows
// fire with the same results in the same order, the same updates and
// late records are reported. Checkpoints taken while records keep coming
// restore (the store linked back) into windows that go on as the memory
// backend's restored at the barrier.
func TestWindowsAsMemory(t *testing.T) { testAsMemory(t, rigSliding) }

// TestSessionsAsMemory is TestWindowsAsMemory for sessions, with a fixed
// gap and with a gap per record: sessions merge, late records join
// sessions that are not late, merged sessions that fired fire again.
func TestSessionsAsMemory(t *testing.T) {
	t.Run("gap", func(t *testing.T) { testAsMemory(t, rigSessions) })
	t.Run("gap per record", func(t *testing.T) { testAsMemory(t, rigGaps) })
}

func testAsMemory(t *testing.T, kind rigKind) {
	r := newRig(t, 1, kind)
	for range 5 {
		r.wins[0].small()
		r.step(3000)
		models := r.checkpoint(false)
		r.open(1, r.id, models)
	}
	r.step(3000)
	r.wm = eventtime.MaxTime
	r.advance()
	r.checkSeen()
}

// TestWindowsRescale restores checkpoints of pebble windows at other
// parallelisms, a savepoint (WindowState's form) on memory and on
// pebble, and a checkpoint of the memory backend on pebble.
func TestWindowsRescale(t *testing.T) { testRescale(t, rigSliding) }

// TestSessionsRescale is TestWindowsRescale for sessions: 2 -> 3 -> 2
// (a savepoint, also restored on memory) -> 1 (a checkpoint of the
// memory backend).
func TestSessionsRescale(t *testing.T) {
	t.Run("gap", func(t *testing.T) { testRescale(t, rigSessions) })
	t.Run("gap per record", func(t *testing.T) { testRescale(t, rigGaps) })
}

func testRescale(t *testing.T, kind rigKind) {
	r := newRig(t, 2, kind)
	r.step(3000)
	models := r.checkpoint(false)
	r.open(3, r.id, r.rescale(models, 3))
	r.exact = false
	r.step(3000)
	models = r.checkpoint(true)
	// The savepoint on memory: the same windows as the models'.
	for sub := range 2 {
		cp := checkpoint.New(context.Background(), rigConfig(2), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: t.Logf})
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", r.id), false, true); err != nil {
			t.Fatal(err)
		}
		m := kind.model()
		checkpoint.RestoreKeyed(cp.Task(0, sub), 0, "", func(sec []byte) error { return m.Restore(sec, testCodec.DecodeKey, testCodec.DecodeValue) })
		if err := cp.RunRestores(); err != nil {
			t.Fatal(err)
		}
		want := r.rescale(models, 2)[sub]
		var got, exp []emitted
		m.Advance(eventtime.MaxTime, func(k int64, w eventtime.Window, a *value) { got = append(got, emitted{k, w, *a, false}) })
		want.Advance(eventtime.MaxTime, func(k int64, w eventtime.Window, a *value) { exp = append(exp, emitted{k, w, *a, false}) })
		if len(exp) == 0 || m.Watermark() != want.Watermark() || !slices.Equal(got, exp) {
			t.Fatalf("subtask %d of the savepoint on memory: watermark %d, fires %v; want %d, %v", sub, m.Watermark(), got, want.Watermark(), exp)
		}
	}
	r.open(2, r.id, r.rescale(models, 2))
	r.step(3000)
	// A checkpoint of the memory backend on pebble: each subtask's full
	// file and a delta on top of it (sessions: the full file only),
	// merged into one subtask.
	r.id++
	if err := r.stor.Prepare(r.id); err != nil {
		t.Fatal(err)
	}
	var files []storage.StateFile
	epochs := make([]uint64, len(r.models))
	write := func(delta bool) {
		for sub, m := range r.models {
			start, end := keygroup.Range(sub, rigMaxP, r.p)
			sec := state.NewSections(start, end)
			kg := func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }
			if kind == rigSliding {
				d := eventtime.Delta{Full: !delta, Since: epochs[sub], Keep: m.Epoch()}
				e, err := m.SnapshotDelta(sec, kg, testCodec.EncodeKey, testCodec.EncodeValue, d)
				if err != nil {
					t.Fatal(err)
				}
				epochs[sub] = e
			} else if err := m.Snapshot(sec, kg, testCodec.EncodeKey, testCodec.EncodeValue); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("proc-%d-%v.state", sub, delta)
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
			f := storage.StateFile{Subtask: sub, Name: name, KeyGroups: [2]int{start, end}, Size: size, CRC: crc}
			if delta {
				f.Kind = storage.KindDelta
			}
			files = append(files, f)
		}
	}
	write(false)
	if kind == rigSliding {
		r.step(1000)
		write(true)
	}
	sortBySubtask(files)
	m := &storage.Manifest{ID: r.id, Job: "p", MaxParallelism: rigMaxP, Mode: config.ExactlyOnce,
		Nodes: []storage.NodeState{{UID: "proc", Name: "proc", Kind: "process", Parallelism: r.p, Files: files}}}
	if err := r.stor.Commit(m); err != nil {
		t.Fatal(err)
	}
	r.open(1, r.id, r.rescale(r.models, 1))
	r.step(3000)
	r.wm = eventtime.MaxTime
	r.advance()
	r.checkSeen()
}

// sortBySubtask puts each subtask's files together, in order, as a
// manifest has them.
func sortBySubtask(files []storage.StateFile) {
	slices.SortStableFunc(files, func(a, b storage.StateFile) int { return a.Subtask - b.Subtask })
}
