package pebblestate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// windowRig runs the sliding windows (with allowed lateness) of one node
// at some parallelism on both backends side by side: pebble Windows per
// subtask, and a memory WindowState per subtask as the model.
type windowRig struct {
	t      *testing.T
	fsys   vfs.FS
	stor   *storage.Storage
	p      int
	wins   []*Windows[int64, value]
	models []*eventtime.WindowState[int64, value]
	keys   [][]int64
	exact  bool
	wm     int64
	id     int64
	rng    *rand.Rand
}

var rigAssigner = eventtime.WindowAssigner{Kind: eventtime.Sliding, Size: 100, Slide: 50}

const rigLateness = 60

func newModel() *eventtime.WindowState[int64, value] {
	return eventtime.NewWindowState[int64, value](rigAssigner, rigLateness, nil)
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
		r.wins = append(r.wins, OpenWindows(cp.Task(0, sub), 0, rigAssigner, rigLateness, testCodec))
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
		w.store.close()
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
		add := func(a *value) { a.N++; a.Name = fmt.Sprint(a.N) }
		var got, want []emitted
		okGot := r.wins[sub].Add(k, ts, r.wm, add, func(k int64, w eventtime.Window, a *value) { got = append(got, emitted{k, w, *a, true}) })
		okWant := r.models[sub].Add(k, ts, r.wm, add, func(k int64, w eventtime.Window, a *value) { want = append(want, emitted{k, w, *a, true}) })
		if okGot != okWant || !slices.Equal(got, want) {
			r.t.Fatalf("subtask %d: Add(%d, %d) at watermark %d: pebble %v %v, memory %v %v", sub, k, ts, r.wm, okGot, got, okWant, want)
		}
	}
}

func (r *windowRig) advance() {
	r.t.Helper()
	for sub := range r.p {
		var got, want []emitted
		r.wins[sub].Advance(r.wm, func(k int64, w eventtime.Window, a *value) { got = append(got, emitted{k, w, *a, false}) })
		r.models[sub].Advance(r.wm, func(k int64, w eventtime.Window, a *value) { want = append(want, emitted{k, w, *a, false}) })
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
		st := w.store
		for _, p := range st.parts {
			p.barrier()
		}
		c, base := st.begin(id, id-1)
		c.savepoint = savepoint
		var files []storage.StateFile
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			files, _, err = st.write(c, base, r.stor)
		}()
		wm := r.wm
		r.step(100)
		r.wm = wm
		<-done
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
	c := newModel()
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

func newWindowRig(t *testing.T, p int) *windowRig {
	fsys := vfs.NewMem()
	r := &windowRig{t: t, fsys: fsys, stor: &storage.Storage{FS: fsys, Dir: "/ckpt"}, exact: true, rng: rand.New(rand.NewPCG(5, 6)), wm: eventtime.MinTime}
	var models []*eventtime.WindowState[int64, value]
	for range p {
		models = append(models, newModel())
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
func TestWindowsAsMemory(t *testing.T) {
	r := newWindowRig(t, 1)
	for range 5 {
		r.wins[0].store.spillAt, r.wins[0].store.maxCache = 16, 64
		r.step(3000)
		models := r.checkpoint(false)
		r.open(1, r.id, models)
	}
	r.step(3000)
	r.wm = eventtime.MaxTime
	r.advance()
}

// TestWindowsRescale restores checkpoints of pebble windows at other
// parallelisms, a savepoint (WindowState's form) on memory and on
// pebble, and a checkpoint of the memory backend on pebble.
func TestWindowsRescale(t *testing.T) {
	r := newWindowRig(t, 2)
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
		m := newModel()
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
	// file and a delta on top of it, merged into one subtask.
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
			d := eventtime.Delta{Full: !delta, Since: epochs[sub], Keep: m.Epoch()}
			e, err := m.SnapshotDelta(sec, func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }, testCodec.EncodeKey, testCodec.EncodeValue, d)
			if err != nil {
				t.Fatal(err)
			}
			epochs[sub] = e
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
	r.step(1000)
	write(true)
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
}

// sortBySubtask puts each subtask's files together, in order, as a
// manifest has them.
func sortBySubtask(files []storage.StateFile) {
	slices.SortStableFunc(files, func(a, b storage.StateFile) int { return a.Subtask - b.Subtask })
}
