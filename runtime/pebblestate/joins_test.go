package pebblestate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// The right records of the test joins are strings: another type than the
// left ones', so that swapped serializers fail.
func encRight(w *codec.Writer, s *string) { w.String(*s) }
func decRight(r *codec.Reader) *string {
	s := r.String()
	return &s
}

type memJoin = eventtime.IntervalJoin[int64, value, string]

// joinRig runs an interval join of one node at some parallelism on both
// backends side by side: pebble IntervalJoin per subtask, and a memory
// IntervalJoin per subtask as the model.
type joinRig struct {
	t            *testing.T
	fsys         vfs.FS
	stor         *storage.Storage
	p            int
	lower, upper int64
	joins        []*IntervalJoin[int64, value, string]
	models       []*memJoin
	keys         [][]int64
	wm           int64
	id           int64
	n            int // records added, for their values
	rng          *rand.Rand
}

type pair struct {
	l  value
	r  string
	ts int64
}

func (r *joinRig) newModel() *memJoin {
	return eventtime.NewIntervalJoin[int64, value, string](r.lower, r.upper)
}

func (r *joinRig) open(p int, restore int64, models []*memJoin) {
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
		j := OpenIntervalJoin(cp.Task(0, sub), 0, r.lower, r.upper, testCodec, encRight, decRight)
		j.spillAt = 1 << 10 // write between barriers too
		r.joins = append(r.joins, j)
	}
	if err := cp.RunRestores(); err != nil {
		r.t.Fatal(err)
	}
	r.models = models
	for k := range int64(40) {
		kg := keygroup.Of(testCodec.Hash(k), rigMaxP)
		for sub := range p {
			if start, end := keygroup.Range(sub, rigMaxP, p); kg >= start && kg < end {
				r.keys[sub] = append(r.keys[sub], k)
			}
		}
	}
}

func (r *joinRig) close() {
	for _, j := range r.joins {
		j.store.close()
	}
	r.joins = nil
}

// step adds ops random records to either side (some late, some matching
// many records) and moves the watermark now and then, on both backends,
// and compares what they emit, and their buffers' sizes.
func (r *joinRig) step(ops int) {
	r.t.Helper()
	for range ops {
		sub := r.rng.IntN(r.p)
		if r.rng.IntN(25) == 0 {
			r.wm += r.rng.Int64N(40)
			r.advance()
			continue
		}
		if len(r.keys[sub]) == 0 {
			continue
		}
		k := r.keys[sub][r.rng.IntN(len(r.keys[sub]))]
		ts := r.wm - 20 + r.rng.Int64N(150)
		inputWM := r.wm - r.rng.Int64N(30)
		if r.rng.IntN(3) == 0 {
			ts = r.wm + 10 // equal times: arrival order decides
		}
		r.n++
		var got, want []pair
		var okGot, okWant bool
		if r.rng.IntN(2) == 0 {
			l := value{N: int64(r.n), Name: fmt.Sprint("l", r.n)}
			okGot = r.joins[sub].AddLeft(k, l, ts, inputWM, func(l value, s string, ts int64) { got = append(got, pair{l, s, ts}) })
			okWant = r.models[sub].AddLeft(k, l, ts, inputWM, func(l value, s string, ts int64) { want = append(want, pair{l, s, ts}) })
		} else {
			s := fmt.Sprint("r", r.n)
			okGot = r.joins[sub].AddRight(k, s, ts, inputWM, func(l value, s string, ts int64) { got = append(got, pair{l, s, ts}) })
			okWant = r.models[sub].AddRight(k, s, ts, inputWM, func(l value, s string, ts int64) { want = append(want, pair{l, s, ts}) })
		}
		if okGot != okWant || !slices.Equal(got, want) {
			r.t.Fatalf("subtask %d: record of key %d at %d, input watermark %d, watermark %d: pebble %v %v, memory %v %v", sub, k, ts, inputWM, r.wm, okGot, got, okWant, want)
		}
	}
}

func (r *joinRig) advance() {
	r.t.Helper()
	for sub := range r.p {
		r.joins[sub].Advance(r.wm)
		r.models[sub].Advance(r.wm)
		if got, want := r.joins[sub].Len(), r.models[sub].Len(); got != want {
			r.t.Fatalf("subtask %d at watermark %d: pebble buffers %d records, memory %d", sub, r.wm, got, want)
		}
		if got, want := r.joins[sub].Watermark(), r.models[sub].Watermark(); got != want {
			r.t.Fatalf("subtask %d: pebble's watermark is %d, memory's %d", sub, got, want)
		}
	}
}

// checkpoint takes a checkpoint of every subtask's join while records
// keep coming, and returns copies of the models at the barrier.
func (r *joinRig) checkpoint(savepoint bool) []*memJoin {
	r.t.Helper()
	r.id++
	id := r.id
	if err := r.stor.Prepare(id); err != nil {
		r.t.Fatal(err)
	}
	var models []*memJoin
	var all []storage.StateFile
	for sub, j := range r.joins {
		models = append(models, r.split([]*memJoin{r.models[sub]}, 0, rigMaxP))
		st := j.store
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
	r.commit(id, all)
	return models
}

func (r *joinRig) commit(id int64, files []storage.StateFile) {
	r.t.Helper()
	m := &storage.Manifest{ID: id, Job: "p", MaxParallelism: rigMaxP, Mode: config.ExactlyOnce,
		Nodes: []storage.NodeState{{UID: "proc", Name: "proc", Kind: "process", Parallelism: r.p, Files: files,
			KeySchema: testCodec.KeySchema, ValueSchema: testCodec.ValueSchema}}}
	if err := r.stor.Commit(m); err != nil {
		r.t.Fatal(err)
	}
}

func joinKeyGroup(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }

// split restores the key groups [start, end) of the models' snapshots
// (models[i] is subtask i of len(models)) into a new model, as the memory
// backend does.
func (r *joinRig) split(models []*memJoin, start, end int) *memJoin {
	r.t.Helper()
	c := r.newModel()
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

func (r *joinRig) rescale(models []*memJoin, p int) []*memJoin {
	var out []*memJoin
	for sub := range p {
		start, end := keygroup.Range(sub, rigMaxP, p)
		out = append(out, r.split(models, start, end))
	}
	return out
}

// memoryCheckpoint writes the models as a checkpoint of the memory
// backend.
func (r *joinRig) memoryCheckpoint() {
	r.t.Helper()
	r.id++
	if err := r.stor.Prepare(r.id); err != nil {
		r.t.Fatal(err)
	}
	var files []storage.StateFile
	for sub, m := range r.models {
		start, end := keygroup.Range(sub, rigMaxP, r.p)
		sec := state.NewSections(start, end)
		if err := m.Snapshot(sec, joinKeyGroup, testCodec.EncodeKey, testCodec.EncodeValue, encRight); err != nil {
			r.t.Fatal(err)
		}
		name := fmt.Sprintf("proc-%d.state", sub)
		w, err := r.stor.CreateState(r.id, name, start, end-start)
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
		files = append(files, storage.StateFile{Subtask: sub, Name: name, KeyGroups: [2]int{start, end}, Size: size, CRC: crc})
	}
	r.commit(r.id, files)
}

func newJoinRig(t *testing.T, p int, lower, upper int64) *joinRig {
	fsys := vfs.NewMem()
	r := &joinRig{t: t, fsys: fsys, stor: &storage.Storage{FS: fsys, Dir: "/ckpt"}, lower: lower, upper: upper,
		rng: rand.New(rand.NewPCG(7, 8))}
	var models []*memJoin
	for range p {
		models = append(models, r.newModel())
	}
	r.open(p, 0, models)
	t.Cleanup(r.close)
	return r
}

// TestIntervalJoinAsMemory adds random records to both sides of an
// interval join on the pebble backend and on the memory one: every record
// meets the same records of the other side in the same order (equal
// times in arrival order), the same are late, and the same are dropped by
// the watermark. Checkpoints taken while records keep coming restore (the
// store linked back) into joins that go on as the memory backend's
// restored at the barrier.
func TestIntervalJoinAsMemory(t *testing.T) {
	r := newJoinRig(t, 1, -20, 30)
	for range 5 {
		r.step(3000)
		models := r.checkpoint(false)
		r.open(1, r.id, models)
	}
	r.step(3000)
	r.wm = eventtime.MaxTime
	r.advance()
	if n := r.joins[0].Len(); n != 0 {
		t.Fatalf("%d records buffered after the last watermark", n)
	}
}

// TestIntervalJoinRescale restores checkpoints of pebble joins at other
// parallelisms (2 to 3, 3 to 1), a savepoint (IntervalJoin's form) on
// memory and on pebble, and a checkpoint of the memory backend on pebble.
func TestIntervalJoinRescale(t *testing.T) {
	r := newJoinRig(t, 2, 0, 25)
	r.step(3000)
	models := r.checkpoint(false)
	r.open(3, r.id, r.rescale(models, 3))
	r.step(3000)
	models = r.checkpoint(true)
	// The savepoint on memory: the same records as the models'.
	for sub := range 2 {
		cp := checkpoint.New(context.Background(), rigConfig(2), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: t.Logf})
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", r.id), false, true); err != nil {
			t.Fatal(err)
		}
		m := r.newModel()
		checkpoint.RestoreKeyed(cp.Task(0, sub), 0, "", func(sec []byte) error {
			return m.Restore(sec, testCodec.DecodeKey, testCodec.DecodeValue, decRight)
		})
		if err := cp.RunRestores(); err != nil {
			t.Fatal(err)
		}
		want := r.rescale(models, 2)[sub]
		if m.Len() == 0 || m.Len() != want.Len() || m.Watermark() != want.Watermark() {
			t.Fatalf("subtask %d of the savepoint on memory: %d records, watermark %d; want %d, %d", sub, m.Len(), m.Watermark(), want.Len(), want.Watermark())
		}
		// Same records: a right record at every time meets the same.
		for _, k := range r.keysOf(sub, 2) {
			for ts := want.Watermark() + 1; ts < want.Watermark()+200; ts += 7 {
				var got, exp []pair
				m.AddRight(k, "probe", ts, eventtime.MinTime, func(l value, s string, ts int64) { got = append(got, pair{l, s, ts}) })
				want.AddRight(k, "probe", ts, eventtime.MinTime, func(l value, s string, ts int64) { exp = append(exp, pair{l, s, ts}) })
				if !slices.Equal(got, exp) {
					t.Fatalf("subtask %d of the savepoint on memory, key %d at %d: pairs %v, want %v", sub, k, ts, got, exp)
				}
			}
		}
	}
	r.open(2, r.id, r.rescale(models, 2))
	r.step(3000)
	models = r.checkpoint(false)
	r.open(1, r.id, r.rescale(models, 1))
	r.step(3000)
	// A checkpoint of the memory backend on pebble, at another
	// parallelism.
	r.memoryCheckpoint()
	r.open(2, r.id, r.rescale(r.models, 2))
	r.step(3000)
	r.wm = eventtime.MaxTime
	r.advance()
}

// TestIntervalJoinNewBounds restores a checkpoint (linked: the same
// parallelism) into a join with other bounds: records are dropped when the
// new bounds say, as on the memory backend.
func TestIntervalJoinNewBounds(t *testing.T) {
	r := newJoinRig(t, 1, -20, 30)
	r.step(3000)
	models := r.checkpoint(false)
	r.lower, r.upper = -50, 5
	model := r.split(models, 0, rigMaxP) // restored with the new bounds
	r.open(1, r.id, []*memJoin{model})
	r.step(3000)
	r.wm = eventtime.MaxTime
	r.advance()
}

// keysOf are the test's keys of subtask sub of p.
func (r *joinRig) keysOf(sub, p int) []int64 {
	var ks []int64
	start, end := keygroup.Range(sub, rigMaxP, p)
	for k := range int64(40) {
		if kg := joinKeyGroup(k); kg >= start && kg < end {
			ks = append(ks, k)
		}
	}
	return ks
}
