package pebblestate

import (
	"context"
	"fmt"
	"math"
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

// timerRig runs the timers of one process node at some parallelism on
// both backends side by side: the pebble Timers in the store of each
// subtask, and a memory TimerService per subtask as the model.
type timerRig struct {
	t      *testing.T
	fsys   vfs.FS
	stor   *storage.Storage
	p      int
	stores []*Keyed[int64, value]
	timers []*Timers[int64]
	models []*eventtime.TimerService[int64]
	keys   [][]int64 // by subtask, the keys it owns
	// exact is cleared once the models merged the timers of several
	// subtasks: timers of equal time then run in an unspecified order.
	exact   bool
	wm, now int64
	id      int64 // the newest checkpoint
	rng     *rand.Rand
}

const rigMaxP = 16

func rigConfig(p int) *config.Config {
	return &config.Config{Name: "p", MaxParallelism: rigMaxP,
		Nodes:      []config.NodeConfig{{Name: "proc", UID: "proc", Kind: "process", Parallelism: p}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt", Retain: 100}}
}

// open opens p subtasks' stores and timers, restored from checkpoint
// restore when it is not 0, and gives them models.
func (r *timerRig) open(p int, restore int64, models []*eventtime.TimerService[int64]) {
	r.t.Helper()
	for _, st := range r.stores {
		st.close()
	}
	cp := checkpoint.New(context.Background(), rigConfig(p), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: r.t.Logf})
	if restore > 0 {
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", restore), false, true); err != nil {
			r.t.Fatal(err)
		}
	}
	r.p, r.stores, r.timers, r.keys = p, nil, nil, make([][]int64, p)
	for sub := range p {
		st := Open(cp.Task(0, sub), 0, testCodec)
		r.stores = append(r.stores, st)
		r.timers = append(r.timers, OpenTimers(st))
	}
	if err := cp.RunRestores(); err != nil {
		r.t.Fatal(err)
	}
	r.models = models
	for k := range int64(200) {
		kg := keygroup.Of(testCodec.Hash(k), rigMaxP)
		for sub := range p {
			if start, end := keygroup.Range(sub, rigMaxP, p); kg >= start && kg < end {
				r.keys[sub] = append(r.keys[sub], k)
			}
		}
	}
}

func (r *timerRig) close() {
	for _, st := range r.stores {
		st.close()
	}
	r.stores = nil
}

type fired struct {
	k          int64
	at         int64
	processing bool
}

// fire is what a timer's callback does, the same on both backends: it
// registers and deletes timers, some due already (which run in the same
// advance), some of other keys.
func fire(reg, del func(k, at int64, processing bool), log *[]fired, processing bool) func(k, at int64) {
	return func(k, at int64) {
		*log = append(*log, fired{k, at, processing})
		switch {
		case at%7 == 0:
			reg(k, at-1, processing) // due already
		case (k+at)%3 == 0:
			reg(k, at+2+k%5, processing)
		case (k+at)%3 == 1:
			del(k, at+2, processing)
			reg(k, at+40, !processing)
		}
	}
}

// step does ops random operations on every subtask, on both backends,
// and compares the timers they run.
func (r *timerRig) step(ops int) {
	r.t.Helper()
	for range ops {
		sub := r.rng.IntN(r.p)
		if len(r.keys[sub]) == 0 {
			continue
		}
		tm, m := r.timers[sub], r.models[sub]
		k := r.keys[sub][r.rng.IntN(len(r.keys[sub]))]
		processing := r.rng.IntN(3) == 0
		base := r.wm
		if processing {
			base = r.now
		}
		switch op := r.rng.IntN(10); {
		case op < 5:
			at := base - 5 + r.rng.Int64N(300)
			tm.Register(k, at, processing)
			m.Register(k, at, processing)
		case op < 7:
			at := base - 5 + r.rng.Int64N(300)
			tm.Delete(k, at, processing)
			m.Delete(k, at, processing)
		case op < 9:
			r.wm += r.rng.Int64N(40)
			r.advance(false)
		default:
			r.now += r.rng.Int64N(40)
			r.advance(true)
		}
	}
	for sub := range r.p {
		if got, want := r.timers[sub].Len(), r.models[sub].Len(); got != want {
			r.t.Fatalf("subtask %d holds %d timers on pebble, %d on memory", sub, got, want)
		}
	}
}

// advance moves every subtask's event time (or processing time) on both
// backends and compares the timers that run.
func (r *timerRig) advance(processing bool) {
	r.t.Helper()
	for sub := range r.p {
		tm, m := r.timers[sub], r.models[sub]
		var got, want []fired
		if processing {
			tm.AdvanceProcessing(r.now, fire(tm.Register, tm.Delete, &got, true))
			m.AdvanceProcessing(r.now, fire(m.Register, m.Delete, &want, true))
		} else {
			tm.AdvanceEvent(r.wm, fire(tm.Register, tm.Delete, &got, false))
			m.AdvanceEvent(r.wm, fire(m.Register, m.Delete, &want, false))
		}
		if !r.exact {
			less := func(a, b fired) int {
				if a.at != b.at {
					return int(a.at - b.at)
				}
				return int(a.k - b.k)
			}
			slices.SortFunc(got, less)
			slices.SortFunc(want, less)
		}
		if !slices.Equal(got, want) {
			r.t.Fatalf("subtask %d at watermark %d, time %d: pebble ran %v, memory %v", sub, r.wm, r.now, got, want)
		}
	}
}

// checkpoint takes a checkpoint of every subtask's store, as a job does:
// during changes after the barrier (which it must not hold) it returns
// copies of the models as they were at the barrier.
func (r *timerRig) checkpoint(savepoint bool) []*eventtime.TimerService[int64] {
	r.t.Helper()
	r.id++
	id := r.id
	if err := r.stor.Prepare(id); err != nil {
		r.t.Fatal(err)
	}
	var models []*eventtime.TimerService[int64]
	var all []storage.StateFile
	for sub, st := range r.stores {
		models = append(models, copyModel(r.t, r.models[sub]))
		for _, p := range st.parts {
			p.barrier()
		}
		c, base := st.begin(id, id-1)
		c.savepoint = savepoint
		// The subtask goes on while the writer takes the store's
		// checkpoint (and waits for it when its changes outgrow what it
		// may keep meanwhile).
		var files []storage.StateFile
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			files, _, err = st.write(c, base, r.stor)
		}()
		wm, now := r.wm, r.now
		r.step(50)
		r.wm, r.now = wm, now
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

// copyModel copies a memory TimerService through its snapshot.
func copyModel(t *testing.T, m *eventtime.TimerService[int64]) *eventtime.TimerService[int64] {
	t.Helper()
	sec := state.NewSections(0, rigMaxP)
	if err := m.Snapshot(sec, func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }, testCodec.EncodeKey); err != nil {
		t.Fatal(err)
	}
	c := eventtime.NewTimerService[int64]()
	for i := range sec.W {
		if err := c.Restore(sec.W[i].Bytes(), testCodec.DecodeKey); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func newTimerRig(t *testing.T, p int) *timerRig {
	fsys := vfs.NewMem()
	r := &timerRig{t: t, fsys: fsys, stor: &storage.Storage{FS: fsys, Dir: "/ckpt"}, exact: true, rng: rand.New(rand.NewPCG(3, 4))}
	var models []*eventtime.TimerService[int64]
	for range p {
		models = append(models, eventtime.NewTimerService[int64]())
	}
	r.open(p, 0, models)
	t.Cleanup(r.close)
	return r
}

// TestTimersAsMemory runs random timers, whose callbacks register and
// delete timers (some due already), on the pebble backend and on the
// memory one: the same timers run in the same order. Checkpoints taken
// while the timers go on changing restore, at the same parallelism (the
// store's files linked back), into timers that go on as the memory
// backend's restored at the barrier.
func TestTimersAsMemory(t *testing.T) {
	r := newTimerRig(t, 1)
	for range 6 {
		r.step(3000)
		models := r.checkpoint(false)
		r.open(1, r.id, models)
	}
	r.step(3000)
}

// TestTimersSpill writes the changed timers to the store between
// barriers, also while timers run.
func TestTimersSpill(t *testing.T) {
	r := newTimerRig(t, 1)
	r.timers[0].spillAt = 1 << 10
	r.step(5000)
	models := r.checkpoint(false)
	r.open(1, r.id, models)
	r.timers[0].spillAt = 1 << 10
	r.step(5000)
}

// TestTimersRescale restores the checkpoints of pebble timers at another
// parallelism (each subtask copies its key groups from the old stores
// and rebuilds their order by time), and a savepoint (the memory
// backend's form) both on pebble and on memory.
func TestTimersRescale(t *testing.T) {
	r := newTimerRig(t, 2)
	r.step(3000)
	// 2 -> 3: every new subtask takes key groups of one or two old ones;
	// the timers of each key group keep their numbers.
	models := r.checkpoint(false)
	r.open(3, r.id, splitModels(t, models, 3))
	r.exact = false // merged models order equal times their own way
	r.step(3000)
	// 3 -> 1.
	models = r.checkpoint(false)
	r.open(1, r.id, splitModels(t, models, 1))
	r.step(3000)
	// A savepoint: the store is written in canonical form, and restores
	// on memory and on pebble.
	models = r.checkpoint(true)
	models = splitModels(t, models, 2)
	for sub := range 2 {
		got, want := drain(restoreMemory(t, r.fsys, r.id, 2, sub)), drain(copyModel(t, models[sub]))
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("subtask %d of the savepoint on memory holds %v, want %v", sub, got, want)
		}
	}
	r.open(2, r.id, models)
	r.step(3000)
	// A checkpoint of the memory backend restores on pebble.
	r.open(3, r.memoryCheckpoint(3), splitModels(t, r.models, 3))
	r.step(3000)
}

// drain runs every timer of m, and returns them by time and key.
func drain(m *eventtime.TimerService[int64]) []fired {
	var log []fired
	for _, processing := range []bool{false, true} {
		f := func(k, at int64) { log = append(log, fired{k, at, processing}) }
		if processing {
			m.AdvanceProcessing(math.MaxInt64, f)
		} else {
			m.AdvanceEvent(math.MaxInt64, f)
		}
	}
	return log
}

// memoryCheckpoint writes the models as the memory backend's checkpoint
// of the timers at parallelism p (their key groups cover all): each
// subtask's full file, and a delta on top of it after the models have
// run on, and returns its id.
func (r *timerRig) memoryCheckpoint(p int) int64 {
	r.t.Helper()
	r.id++
	id := r.id
	if err := r.stor.Prepare(id); err != nil {
		r.t.Fatal(err)
	}
	var files []storage.StateFile
	epochs := make([]uint64, len(r.models))
	write := func(delta bool) {
		for sub, m := range r.models {
			start, end := keygroup.Range(sub, rigMaxP, r.p)
			sec := state.NewSections(start, end)
			d := eventtime.Delta{Full: !delta, Since: epochs[sub], Keep: m.Epoch()}
			e, err := m.SnapshotDelta(sec, func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }, testCodec.EncodeKey, d)
			if err != nil {
				r.t.Fatal(err)
			}
			epochs[sub] = e
			name := fmt.Sprintf("proc-timers-%d-%v.state", sub, delta)
			w, err := r.stor.CreateState(id, name, start, end-start)
			if err != nil {
				r.t.Fatal(err)
			}
			for i := range sec.W {
				w.Section(sec.W[i].Bytes())
			}
			size, crc, err := w.Close()
			if err != nil {
				r.t.Fatal(err)
			}
			f := storage.StateFile{Subtask: sub, State: "timers", Name: name, KeyGroups: [2]int{start, end}, Size: size, CRC: crc}
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
	m := &storage.Manifest{ID: id, Job: "p", MaxParallelism: rigMaxP, Mode: config.ExactlyOnce,
		Nodes: []storage.NodeState{{UID: "proc", Name: "proc", Kind: "process", Parallelism: r.p, Files: files}}}
	if err := r.stor.Commit(m); err != nil {
		r.t.Fatal(err)
	}
	return id
}

// splitModels restores the models' snapshots at parallelism p, as the
// memory backend does.
func splitModels(t *testing.T, models []*eventtime.TimerService[int64], p int) []*eventtime.TimerService[int64] {
	t.Helper()
	var out []*eventtime.TimerService[int64]
	for sub := range p {
		start, end := keygroup.Range(sub, rigMaxP, p)
		c := eventtime.NewTimerService[int64]()
		for _, m := range models {
			sec := state.NewSections(0, rigMaxP)
			if err := m.Snapshot(sec, func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }, testCodec.EncodeKey); err != nil {
				t.Fatal(err)
			}
			for kg := start; kg < end; kg++ {
				if err := c.Restore(sec.W[kg].Bytes(), testCodec.DecodeKey); err != nil {
					t.Fatal(err)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// restoreMemory restores subtask sub of p of the timers of checkpoint id
// as the memory backend does.
func restoreMemory(t *testing.T, fsys vfs.FS, id int64, p, sub int) *eventtime.TimerService[int64] {
	t.Helper()
	cp := checkpoint.New(context.Background(), rigConfig(p), checkpoint.Options{FS: fsys, Output: nopOutput{}, Logf: t.Logf})
	if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", id), false, true); err != nil {
		t.Fatal(err)
	}
	m := eventtime.NewTimerService[int64]()
	checkpoint.RestoreKeyed(cp.Task(0, sub), 0, "timers", func(sec []byte) error { return m.Restore(sec, testCodec.DecodeKey) })
	if err := cp.RunRestores(); err != nil {
		t.Fatal(err)
	}
	return m
}
