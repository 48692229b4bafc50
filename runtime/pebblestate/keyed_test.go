package pebblestate

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

type value struct {
	N    int64
	Name string
}

var testCodec = &state.Codec[int64, value]{
	Hash:      func(k int64) uint64 { return keygroup.HashInt64(k) },
	EncodeKey: func(w *codec.Writer, k int64) { w.Varint(k) },
	DecodeKey: func(r *codec.Reader) int64 { return r.Varint() },
	EncodeValue: func(w *codec.Writer, v *value) {
		m := w.Begin()
		w.Varint(v.N)
		w.String(v.Name)
		w.End(m)
	},
	DecodeValue: func(r *codec.Reader) *value {
		n := r.Nested()
		return &value{N: n.Varint(), Name: n.String()}
	},
	KeySchema: "int64", ValueSchema: "value",
}

// testTask is a checkpointer of one keyed node of one subtask over a
// MemFS, resumed from checkpoint restore when set, and its task.
func testTask(t testing.TB, fsys vfs.FS, restore int64) (*checkpoint.Checkpointer, *checkpoint.Task) {
	t.Helper()
	cfg := &config.Config{Name: "p", MaxParallelism: 16,
		Nodes:      []config.NodeConfig{{Name: "agg", UID: "agg", Kind: "aggregate", Parallelism: 1}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt", Retain: 100}}
	cp := checkpoint.New(context.Background(), cfg, checkpoint.Options{FS: fsys, Output: nopOutput{}, Logf: t.Logf})
	if restore > 0 {
		if err := cp.Recover(fmt.Sprintf("/ckpt/chk-%06d", restore), false, true); err != nil {
			t.Fatal(err)
		}
	}
	return cp, cp.Task(0, 0)
}

type nopOutput struct{}

func (nopOutput) Commit(*storage.Manifest) error { return nil }
func (nopOutput) Clean(*storage.Manifest) error  { return nil }

// mutate changes st and the model m at random, as an operator does.
func mutate(st *Keyed[int64, value], m map[int64]value, rng *rand.Rand, ops, keys int) {
	for range ops {
		k := int64(rng.IntN(keys))
		switch rng.IntN(6) {
		case 5:
			v, added := st.GetOrAdd(k)
			want, ok := m[k]
			if added == ok || *v != want {
				panic(fmt.Sprintf("GetOrAdd(%d) = %v, added %v; want %v (present %v)", k, *v, added, want, ok))
			}
			v.N += 10
			v.Name = fmt.Sprint("added to ", v.N)
			m[k] = *v
		case 0, 1:
			if v := st.Get(k); v != nil {
				v.N++
				v.Name = fmt.Sprint("changed ", v.N)
				m[k] = *v
			} else {
				st.Put(k, &value{N: 1, Name: "new"})
				m[k] = value{N: 1, Name: "new"}
			}
		case 2:
			v := &value{N: int64(rng.IntN(1000)), Name: "put"}
			st.Put(k, v)
			m[k] = *v
		case 3:
			st.Delete(k)
			delete(m, k)
		case 4:
			got := st.Get(k)
			want, ok := m[k]
			if (got != nil) != ok || got != nil && *got != want {
				panic(fmt.Sprintf("Get(%d) = %v, want %v (present %v)", k, got, want, ok))
			}
			if got != nil {
				m[k] = *got
			}
		}
	}
}

// contents reads every key and value of st.
func contents(st *Keyed[int64, value]) map[int64]value {
	out := map[int64]value{}
	for k, v := range st.All {
		out[k] = *v
	}
	return out
}

// TestKeyedCheckpoints changes a store at random with a small cache (so
// that values are written in batches and dropped from the cache), takes
// checkpoints while it goes on changing it before the writer has taken
// them, and restores each: the restored store holds what the store held
// at the barrier, and a checkpoint writes only the sstables that the one
// it builds on does not hold.
func TestKeyedCheckpoints(t *testing.T) {
	fsys := vfs.NewMem()
	stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
	_, task := testTask(t, fsys, 0)
	st := Open(task, 0, testCodec)
	defer st.close()
	st.spillAt, st.maxCache = 16, 64
	rng := rand.New(rand.NewPCG(1, 2))
	const keys = 500
	model := map[int64]value{}
	mutate(st, model, rng, 2000, keys)
	for id := int64(1); id <= 6; id++ {
		want := maps.Clone(model)
		// What Snapshot does at the barrier; the newest completed
		// checkpoint is the one before.
		c, base := st.begin(id, id-1)
		// The subtask goes on before the writer gets to the values: it
		// encodes those it changes first, and nothing reaches the store.
		// Fewer changes than 4*spillAt, the most it keeps before it waits
		// for the writer (which has not started here).
		mutate(st, model, rng, 4*st.spillAt-1, keys)
		if err := stor.Prepare(id); err != nil {
			t.Fatal(err)
		}
		var files []storage.StateFile
		var written int64
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			files, written, err = st.write(c, base, stor)
		}()
		// And while it writes them: enough to outgrow 4*spillAt, so that
		// the subtask waits for the writer to have taken the store's
		// checkpoint.
		mutate(st, model, rng, 150, keys)
		<-done
		if err != nil {
			t.Fatal(err)
		}
		var size, shared int64
		for _, f := range files {
			size += f.Size
			if f.Shared && base[f.Store] == f.Name {
				shared += f.Size
			}
		}
		if id > 1 && shared == 0 {
			t.Errorf("checkpoint %d shares no sstable with the one before", id)
		}
		if written != size-shared {
			t.Errorf("checkpoint %d wrote %d bytes, want its files' %d less the %d it shares", id, written, size, shared)
		}
		m := &storage.Manifest{ID: id, Job: "p", MaxParallelism: 16, Mode: config.ExactlyOnce,
			Nodes: []storage.NodeState{{UID: "agg", Name: "agg", Kind: "aggregate", Parallelism: 1, Files: files}}}
		if err := stor.Commit(m); err != nil {
			t.Fatal(err)
		}
		// Restore it into a new store, as a restarted job does.
		rcp, rt := testTask(t, fsys, id)
		back := Open(rt, 0, testCodec)
		if err := rcp.RunRestores(); err != nil {
			t.Fatal(err)
		}
		got := contents(back)
		back.close()
		if !maps.Equal(got, want) {
			t.Fatalf("checkpoint %d: the restored store has %d keys, want the %d at the barrier", id, len(got), len(want))
		}
		mutate(st, model, rng, 1000, keys)
		if got := contents(st); !maps.Equal(got, model) {
			t.Fatalf("after checkpoint %d the store has %d keys, want %d", id, len(got), len(model))
		}
	}
}

// TestKeyedCacheBounded: when fewer values change between two barriers
// than a batch holds, the barriers write them all and no batch ever is;
// the cache must still be trimmed to its size. While a checkpoint is
// being taken it keeps the values the store lacks (those of the
// capture, not written yet), and once it is taken it reads the store as
// the writer left it: reading every key, then and after, gives the
// values changed last, not those the store held before the barrier.
func TestKeyedCacheBounded(t *testing.T) {
	fsys := vfs.NewMem()
	stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
	_, task := testTask(t, fsys, 0)
	st := Open(task, 0, testCodec)
	defer st.close()
	st.spillAt, st.maxCache = 16, 64
	const keys = 400
	model := map[int64]value{}
	for k := range int64(keys) {
		st.Put(k, &value{N: k})
		model[k] = value{N: k}
	}
	st.spill(true)
	rng := rand.New(rand.NewPCG(3, 4))
	most := 0
	for id := int64(1); id <= 40; id++ {
		// Fewer changes than spillAt, each to a key the cache may not
		// hold.
		for range st.spillAt - 1 {
			k := int64(rng.IntN(keys))
			v := st.Get(k)
			if v == nil || *v != model[k] {
				t.Fatalf("before checkpoint %d: key %d is %v, want %v", id, k, v, model[k])
			}
			v.N += 1000
			model[k] = *v
			most = max(most, len(st.cache))
		}
		c, base := st.begin(id, id-1)
		// Every key, read while the capture's values are not in the store.
		for k := range int64(keys) {
			if v := st.peek(k); v == nil || *v != model[k] {
				t.Fatalf("checkpoint %d being taken: key %d is %v, want %v", id, k, v, model[k])
			}
			most = max(most, len(st.cache))
		}
		if err := stor.Prepare(id); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.write(c, base, stor); err != nil {
			t.Fatal(err)
		}
		// And once it is taken, when the cache may drop them: the store
		// has them now.
		for k := range int64(keys) {
			if v := st.peek(k); v == nil || *v != model[k] {
				t.Fatalf("checkpoint %d taken: key %d is %v, want %v", id, k, v, model[k])
			}
			most = max(most, len(st.cache))
		}
	}
	// A trim leaves at most maxCache values but those it must keep (here
	// fewer than 2*spillAt); the cache outgrows it by one before the
	// next access trims it, or by a batch of reads (peek's margin).
	if limit := st.maxCache + st.spillAt + 1; most > limit {
		t.Errorf("the cache held up to %d values, want at most %d", most, limit)
	}
	if got := contents(st); !maps.Equal(got, model) {
		t.Errorf("the store's keys and values differ from those put: %d keys, want %d", len(got), len(model))
	}
}
