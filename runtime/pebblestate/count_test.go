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

func encRec(w *codec.Writer, r *int64) { w.Varint(*r) }
func decRec(r *codec.Reader) *int64 {
	x := r.Varint()
	return &x
}

func addRec(a *value, r int64) {
	a.N += r
	a.Name = fmt.Sprintf("%.20s%d", a.Name, r%10)
}

type countOut struct {
	k   int64
	acc value
	ts  int64
}

// countRig runs count windows on both backends side by side, as
// windowRig does windows.
type countRig struct {
	t           *testing.T
	fsys        vfs.FS
	stor        *storage.Storage
	size, every uint64
	p           int
	wins        []*CountWindows[int64, int64, value]
	models      []*eventtime.CountWindows[int64, int64, value]
	keys        [][]int64
	got, want   []countOut
	fired       int
	id, ts      int64
	rng         *rand.Rand
}

func (r *countRig) model() *eventtime.CountWindows[int64, int64, value] {
	return eventtime.NewCountWindows(r.size, r.every, addRec, func(k int64, a *value, ts int64) { r.want = append(r.want, countOut{k, *a, ts}) })
}

func (r *countRig) open(p int, restore int64, models []*eventtime.CountWindows[int64, int64, value]) {
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
		r.wins = append(r.wins, OpenCountWindows(cp.Task(0, sub), 0, r.size, r.every, addRec,
			func(k int64, a *value, ts int64) { r.got = append(r.got, countOut{k, *a, ts}) }, testCodec, encRec, decRec))
	}
	if err := cp.RunRestores(); err != nil {
		r.t.Fatal(err)
	}
	r.models = models
	for k := range int64(300) {
		kg := keygroup.Of(testCodec.Hash(k), rigMaxP)
		for sub := range p {
			if start, end := keygroup.Range(sub, rigMaxP, p); kg >= start && kg < end {
				r.keys[sub] = append(r.keys[sub], k)
			}
		}
	}
}

func (r *countRig) close() {
	for _, w := range r.wins {
		w.store.close()
	}
	r.wins = nil
}

func (r *countRig) step(ops int) {
	r.t.Helper()
	for range ops {
		sub := r.rng.IntN(r.p)
		if len(r.keys[sub]) == 0 {
			continue
		}
		k := r.keys[sub][r.rng.IntN(len(r.keys[sub]))]
		// Times out of order now and then: count windows go by arrival,
		// and both backends keep a sliding window's records in that order.
		r.ts += r.rng.Int64N(3)
		rec, ts := r.rng.Int64N(1000), r.ts-r.rng.Int64N(4)
		r.wins[sub].Add(k, rec, ts)
		r.models[sub].Add(k, rec, ts)
		r.fired += len(r.want)
		if !slices.Equal(r.got, r.want) {
			r.t.Fatalf("subtask %d: Add(%d, %d, %d): pebble emitted %v, memory %v", sub, k, rec, ts, r.got, r.want)
		}
		r.got, r.want = r.got[:0], r.want[:0]
	}
}

func (r *countRig) sections(m *eventtime.CountWindows[int64, int64, value]) *state.Sections {
	r.t.Helper()
	sec := state.NewSections(0, rigMaxP)
	if err := m.Snapshot(sec, func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }, testCodec.EncodeKey, testCodec.EncodeValue, r.encT()); err != nil {
		r.t.Fatal(err)
	}
	return sec
}

func (r *countRig) encT() func(*codec.Writer, *int64) {
	if r.every < r.size {
		return encRec
	}
	return nil
}

func (r *countRig) decT() func(*codec.Reader) *int64 {
	if r.every < r.size {
		return decRec
	}
	return nil
}

// rescale splits the models' windows (models[i] is subtask i of
// len(models)) into p new models, as the memory backend restores them.
func (r *countRig) rescale(models []*eventtime.CountWindows[int64, int64, value], p int) []*eventtime.CountWindows[int64, int64, value] {
	r.t.Helper()
	var out []*eventtime.CountWindows[int64, int64, value]
	secs := make([]*state.Sections, len(models))
	for i, m := range models {
		secs[i] = r.sections(m)
	}
	for sub := range p {
		c := r.model()
		start, end := keygroup.Range(sub, rigMaxP, p)
		for i := range models {
			lo, hi := keygroup.Range(i, rigMaxP, len(models))
			for kg := max(start, lo); kg < min(end, hi); kg++ {
				if err := c.Restore(secs[i].W[kg].Bytes(), testCodec.DecodeKey, testCodec.DecodeValue, r.decT()); err != nil {
					r.t.Fatal(err)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

func (r *countRig) checkpoint(savepoint bool) []*eventtime.CountWindows[int64, int64, value] {
	r.t.Helper()
	r.id++
	if err := r.stor.Prepare(r.id); err != nil {
		r.t.Fatal(err)
	}
	var models []*eventtime.CountWindows[int64, int64, value]
	var all []storage.StateFile
	for sub, w := range r.wins {
		// The model as it is at this subtask's barrier.
		models = append(models, r.rescale([]*eventtime.CountWindows[int64, int64, value]{r.models[sub]}, 1)[0])
		files, err := keyedSide(rigSide{}, w.store).checkpoint(r.stor, r.id, savepoint, func() { r.step(100) })
		if err != nil {
			r.t.Fatal(err)
		}
		all = append(all, files...)
	}
	r.commit(all)
	return models
}

func (r *countRig) commit(files []storage.StateFile) {
	r.t.Helper()
	m := &storage.Manifest{ID: r.id, Job: "p", MaxParallelism: rigMaxP, Mode: config.ExactlyOnce,
		Nodes: []storage.NodeState{{UID: "proc", Name: "proc", Kind: "process", Parallelism: r.p, Files: files,
			KeySchema: testCodec.KeySchema, ValueSchema: testCodec.ValueSchema}}}
	if err := r.stor.Commit(m); err != nil {
		r.t.Fatal(err)
	}
}

// TestCountWindowsAsMemory adds random records to tumbling and sliding
// count windows on pebble and on memory side by side and compares every
// result, through checkpoints taken while records keep coming, restores
// at 1 -> 2 -> 3 -> 1 (the last through a savepoint, also restored on
// memory), and a checkpoint of the memory backend restored on pebble.
func TestCountWindowsAsMemory(t *testing.T) {
	for _, sz := range [][2]uint64{{5, 5}, {5, 2}, {4, 1}} {
		t.Run(fmt.Sprintf("%d every %d", sz[0], sz[1]), func(t *testing.T) {
			fsys := vfs.NewMem()
			r := &countRig{t: t, fsys: fsys, stor: &storage.Storage{FS: fsys, Dir: "/ckpt"}, size: sz[0], every: sz[1], rng: rand.New(rand.NewPCG(9, 10))}
			t.Cleanup(r.close)
			r.open(1, 0, []*eventtime.CountWindows[int64, int64, value]{r.model()})
			for range 2 {
				r.wins[0].store.spillAt, r.wins[0].store.maxCache = 16, 64
				r.step(2000)
				models := r.checkpoint(false)
				r.open(1, r.id, models)
			}
			models := r.checkpoint(false)
			r.open(2, r.id, r.rescale(models, 2))
			r.step(2000)
			models = r.checkpoint(false)
			r.open(3, r.id, r.rescale(models, 3))
			r.step(2000)
			models = r.checkpoint(true)
			// The savepoint on memory: the same windows as the models'.
			cp := checkpoint.New(context.Background(), rigConfig(1), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: t.Logf})
			if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", r.id), false, true); err != nil {
				t.Fatal(err)
			}
			m := r.model()
			checkpoint.RestoreKeyed(cp.Task(0, 0), 0, "", func(sec []byte) error {
				return m.Restore(sec, testCodec.DecodeKey, testCodec.DecodeValue, r.decT())
			})
			if err := cp.RunRestores(); err != nil {
				t.Fatal(err)
			}
			want := r.rescale(models, 1)[0]
			if m.Len() == 0 || m.Len() != want.Len() {
				t.Fatalf("the savepoint on memory has %d open windows, want %d", m.Len(), want.Len())
			}
			r.open(1, r.id, r.rescale(models, 1))
			r.models = []*eventtime.CountWindows[int64, int64, value]{m}
			r.step(3000)
			// A checkpoint of the memory backend on pebble, at 2.
			models = r.rescale(r.models, 2)
			r.id++
			if err := r.stor.Prepare(r.id); err != nil {
				t.Fatal(err)
			}
			var files []storage.StateFile
			for sub, m := range models {
				start, end := keygroup.Range(sub, rigMaxP, 2)
				sec := r.sections(m)
				name := fmt.Sprintf("proc-%d.state", sub)
				w, err := r.stor.CreateState(r.id, name, start, end-start)
				if err != nil {
					t.Fatal(err)
				}
				for kg := start; kg < end; kg++ {
					w.Section(sec.W[kg].Bytes())
				}
				size, crc, err := w.Close()
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, storage.StateFile{Subtask: sub, Name: name, KeyGroups: [2]int{start, end}, Size: size, CRC: crc})
			}
			r.p = 2
			r.commit(files)
			r.open(2, r.id, models)
			r.step(3000)
			if r.fired < 1000 {
				t.Fatalf("only %d windows fired", r.fired)
			}
		})
	}
}
