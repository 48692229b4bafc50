package pebblestate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// trigCodec writes the TriggerAccs of a triggered window of values.
var trigCodec = &state.Codec[int64, eventtime.TriggerAcc[value]]{
	Hash: testCodec.Hash, EncodeKey: testCodec.EncodeKey, DecodeKey: testCodec.DecodeKey,
	EncodeValue: func(w *codec.Writer, v *eventtime.TriggerAcc[value]) {
		w.Uvarint(v.N)
		testCodec.EncodeValue(w, &v.Acc)
	},
	DecodeValue: func(r *codec.Reader) *eventtime.TriggerAcc[value] {
		v := &eventtime.TriggerAcc[value]{N: r.Uvarint()}
		if a := testCodec.DecodeValue(r); a != nil {
			v.Acc = *a
		}
		return v
	},
	KeySchema: "int64", ValueSchema: "trigger value",
}

// trigRig runs windows with a trigger of one node at some parallelism on
// both backends side by side, as windowRig does: pebble Triggered per
// subtask, and a memory TriggeredWindows per subtask as the model.
type trigRig struct {
	t      *testing.T
	fsys   vfs.FS
	stor   *storage.Storage
	p      int
	kind   rigKind
	trig   eventtime.Trigger
	wins   []*Triggered[int64, value]
	models []*eventtime.TriggeredWindows[int64, value]
	keys   [][]int64
	exact  bool
	// got and want collect what the pebble windows and the models emit.
	got, want []trigOut
	seen      map[pipegen.Firing]int
	wm, now   int64
	id        int64
	rng       *rand.Rand
}

type trigOut struct {
	k   int64
	w   eventtime.Window
	f   pipegen.Firing
	acc value
}

func (r *trigRig) model() *eventtime.TriggeredWindows[int64, value] {
	var merge func(dst, src *value)
	if r.kind != rigSliding {
		merge = mergeValues
	}
	return eventtime.NewTriggeredWindows(r.kind.assigner(), rigLateness, merge, r.trig, func(k int64, w eventtime.Window, f pipegen.Firing, a *value) {
		r.want = append(r.want, trigOut{k, w, f, *a})
	})
}

// store is the pebble store of w.
func trigStore(w *Triggered[int64, value]) rigSide {
	switch ws := w.ws.(type) {
	case trigWindows[int64, eventtime.TriggerAcc[value]]:
		return keyedSide(rigSide{}, ws.store)
	case trigSessions[int64, eventtime.TriggerAcc[value]]:
		return keyedSide(rigSide{}, ws.store)
	}
	panic("unknown windows")
}

func (r *trigRig) open(p int, restore int64, models []*eventtime.TriggeredWindows[int64, value]) {
	r.t.Helper()
	r.close()
	cp := checkpoint.New(context.Background(), rigConfig(p), checkpoint.Options{FS: r.fsys, Output: nopOutput{}, Logf: r.t.Logf})
	if restore > 0 {
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", restore), false, true); err != nil {
			r.t.Fatal(err)
		}
	}
	r.p, r.wins, r.keys = p, nil, make([][]int64, p)
	var merge func(dst, src *value)
	if r.kind != rigSliding {
		merge = mergeValues
	}
	for sub := range p {
		r.wins = append(r.wins, OpenTriggered(cp.Task(0, sub), 0, r.kind.assigner(), rigLateness, merge, r.trig, func(k int64, w eventtime.Window, f pipegen.Firing, a *value) {
			r.got = append(r.got, trigOut{k, w, f, *a})
		}, trigCodec))
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

func (r *trigRig) close() {
	for _, w := range r.wins {
		trigStore(w).close()
	}
	r.wins = nil
}

// compare fails the test when the pebble windows emitted other than the
// models, sorted first unless exact.
func (r *trigRig) compare(what string) {
	r.t.Helper()
	for _, o := range r.want {
		r.seen[o.f]++
	}
	if !r.exact {
		less := func(a, b trigOut) int {
			if a.w.End != b.w.End {
				return int(a.w.End - b.w.End)
			}
			return int(a.k - b.k)
		}
		slices.SortStableFunc(r.got, less)
		slices.SortStableFunc(r.want, less)
	}
	if !slices.Equal(r.got, r.want) {
		r.t.Fatalf("%s: pebble emitted %v, memory %v", what, r.got, r.want)
	}
	r.got, r.want = r.got[:0], r.want[:0]
}

func (r *trigRig) step(ops int) {
	r.t.Helper()
	for range ops {
		sub := r.rng.IntN(r.p)
		switch r.rng.IntN(30) {
		case 0:
			r.wm += r.rng.Int64N(60)
			for sub := range r.p {
				r.wins[sub].Advance(r.wm)
				r.models[sub].Advance(r.wm)
				r.compare(fmt.Sprintf("subtask %d at watermark %d", sub, r.wm))
			}
			continue
		case 1:
			r.now += r.rng.Int64N(40)
			for sub := range r.p {
				r.wins[sub].Tick(r.now)
				r.models[sub].Tick(r.now)
				r.compare(fmt.Sprintf("subtask %d at tick %d", sub, r.now))
			}
			continue
		}
		if len(r.keys[sub]) == 0 {
			continue
		}
		k := r.keys[sub][r.rng.IntN(len(r.keys[sub]))]
		ts := r.wm - 150 + r.rng.Int64N(400)
		add := func(a *value) { a.N++; a.Name = fmt.Sprintf("%.20s%d", a.Name, ts%10) }
		var okGot, okWant bool
		if r.kind == rigGaps {
			gap := 1 + r.rng.Int64N(150)
			okGot = r.wins[sub].AddGap(k, ts, gap, r.wm, add)
			okWant = r.models[sub].AddGap(k, ts, gap, r.wm, add)
		} else {
			okGot = r.wins[sub].Add(k, ts, r.wm, add)
			okWant = r.models[sub].Add(k, ts, r.wm, add)
		}
		if !okWant {
			r.seen[255]++
		}
		if okGot != okWant {
			r.t.Fatalf("subtask %d: Add(%d, %d) at watermark %d: pebble %v, memory %v", sub, k, ts, r.wm, okGot, okWant)
		}
		r.compare(fmt.Sprintf("subtask %d: Add(%d, %d) at watermark %d", sub, k, ts, r.wm))
	}
}

// snapshot writes model m's windows into sections of every key group.
func (r *trigRig) snapshot(m *eventtime.TriggeredWindows[int64, value]) *state.Sections {
	r.t.Helper()
	sec := state.NewSections(0, rigMaxP)
	if err := m.Snapshot(sec, func(k int64) int { return keygroup.Of(testCodec.Hash(k), rigMaxP) }, trigCodec.EncodeKey, trigCodec.EncodeValue); err != nil {
		r.t.Fatal(err)
	}
	return sec
}

// split restores the key groups [start, end) of the models' snapshots
// into a new model, as the memory backend does.
func (r *trigRig) split(models []*eventtime.TriggeredWindows[int64, value], start, end int) *eventtime.TriggeredWindows[int64, value] {
	r.t.Helper()
	c := r.model()
	for i, m := range models {
		sec := r.snapshot(m)
		lo, hi := keygroup.Range(i, rigMaxP, len(models))
		for kg := max(start, lo); kg < min(end, hi); kg++ {
			if err := c.Restore(sec.W[kg].Bytes(), trigCodec.DecodeKey, trigCodec.DecodeValue); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	return c
}

func (r *trigRig) rescale(models []*eventtime.TriggeredWindows[int64, value], p int) []*eventtime.TriggeredWindows[int64, value] {
	var out []*eventtime.TriggeredWindows[int64, value]
	for sub := range p {
		start, end := keygroup.Range(sub, rigMaxP, p)
		out = append(out, r.split(models, start, end))
	}
	return out
}

// checkpoint takes a checkpoint of every subtask's windows while records
// keep coming, and returns copies of the models at the barrier.
func (r *trigRig) checkpoint(savepoint bool) []*eventtime.TriggeredWindows[int64, value] {
	r.t.Helper()
	r.id++
	if err := r.stor.Prepare(r.id); err != nil {
		r.t.Fatal(err)
	}
	var models []*eventtime.TriggeredWindows[int64, value]
	var all []storage.StateFile
	for sub, w := range r.wins {
		models = append(models, r.split([]*eventtime.TriggeredWindows[int64, value]{r.models[sub]}, 0, rigMaxP))
		files, err := trigStore(w).checkpoint(r.stor, r.id, savepoint, func() {
			wm, now := r.wm, r.now
			r.step(100)
			r.wm, r.now = wm, now
		})
		if err != nil {
			r.t.Fatal(err)
		}
		all = append(all, files...)
	}
	r.commit(all)
	return models
}

func (r *trigRig) commit(files []storage.StateFile) {
	r.t.Helper()
	m := &storage.Manifest{ID: r.id, Job: "p", MaxParallelism: rigMaxP, Mode: config.ExactlyOnce,
		Nodes: []storage.NodeState{{UID: "proc", Name: "proc", Kind: "process", Parallelism: r.p, Files: files,
			KeySchema: trigCodec.KeySchema, ValueSchema: trigCodec.ValueSchema}}}
	if err := r.stor.Commit(m); err != nil {
		r.t.Fatal(err)
	}
}

// TestTriggeredAsMemory runs windows with triggers on pebble and on
// memory side by side on random records, watermarks and ticks, and
// compares every result (early, on time, late) and its order: tumbling
// and sliding windows and sessions, triggers by count and by interval of
// event and processing time, accumulating and discarding (purge). It
// checkpoints while records keep coming and restores at 1, then rescales
// 2 -> 3 -> 1 through a savepoint, which is also restored on memory, and
// restores a checkpoint of the memory backend on pebble.
func TestTriggeredAsMemory(t *testing.T) {
	for _, kind := range []rigKind{rigSliding, rigSessions, rigGaps} {
		for _, trig := range []eventtime.Trigger{
			{Count: 3},
			{Every: 40, Discard: true},
			{Count: 4, Every: 25, Processing: true},
			{Every: 70, Processing: true, Discard: true},
		} {
			t.Run(fmt.Sprintf("%d/%+v", kind, trig), func(t *testing.T) { testTriggered(t, kind, trig) })
		}
	}
}

func testTriggered(t *testing.T, kind rigKind, trig eventtime.Trigger) {
	fsys := vfs.NewMem()
	r := &trigRig{t: t, fsys: fsys, stor: &storage.Storage{FS: fsys, Dir: "/ckpt"}, kind: kind, trig: trig, exact: true,
		seen: map[pipegen.Firing]int{}, rng: rand.New(rand.NewPCG(7, 8)), wm: eventtime.MinTime, now: 1000}
	t.Cleanup(r.close)
	r.open(1, 0, []*eventtime.TriggeredWindows[int64, value]{r.model()})
	r.wm = 0
	for range 3 {
		trigStore(r.wins[0]).small()
		r.step(2000)
		models := r.checkpoint(false)
		r.open(1, r.id, models)
	}
	r.step(1000)
	// 1 -> 2 -> 3 -> 1, the last through a savepoint.
	models := r.checkpoint(false)
	r.open(2, r.id, r.rescale(models, 2))
	r.exact = false
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
	checkpoint.RestoreKeyed(cp.Task(0, 0), 0, "", func(sec []byte) error { return m.Restore(sec, trigCodec.DecodeKey, trigCodec.DecodeValue) })
	if err := cp.RunRestores(); err != nil {
		t.Fatal(err)
	}
	want := r.rescale(models, 1)[0]
	m.Advance(eventtime.MaxTime)
	got := r.want
	r.want = nil
	want.Advance(eventtime.MaxTime)
	if !slices.Equal(got, r.want) || len(got) == 0 {
		t.Fatalf("the savepoint on memory fires %v, want %v", got, r.want)
	}
	r.want = r.want[:0]
	r.open(1, r.id, r.rescale(models, 1))
	r.step(2000)
	// A checkpoint of the memory backend on pebble, at parallelism 2.
	models = r.rescale(r.models, 2)
	r.id++
	if err := r.stor.Prepare(r.id); err != nil {
		t.Fatal(err)
	}
	var files []storage.StateFile
	for sub, m := range models {
		start, end := keygroup.Range(sub, rigMaxP, 2)
		sec := r.snapshot(m)
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
	r.step(2000)
	r.wm = eventtime.MaxTime
	for sub := range r.p {
		r.wins[sub].Advance(r.wm)
		r.models[sub].Advance(r.wm)
		r.compare(fmt.Sprintf("subtask %d at the end", sub))
	}
	if r.seen[pipegen.Early] == 0 || r.seen[pipegen.OnTime] == 0 || r.seen[pipegen.Late] == 0 || r.seen[255] == 0 {
		t.Fatalf("the workload missed a case: %v early, %v on time, %v late, %v late records", r.seen[pipegen.Early], r.seen[pipegen.OnTime], r.seen[pipegen.Late], r.seen[255])
	}
	t.Logf("%d early, %d on time, %d late, %d late records", r.seen[pipegen.Early], r.seen[pipegen.OnTime], r.seen[pipegen.Late], r.seen[255])
}
