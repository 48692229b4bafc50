package pebblestate

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// decodes counts the values testMapCodec decodes.
var decodes int

var testMapCodec = state.MapCodec(testCodec.Hash, testCodec.EncodeKey, testCodec.DecodeKey, state.StringKeys[string](),
	testCodec.EncodeValue, func(r *codec.Reader) *value { decodes++; return testCodec.DecodeValue(r) }, "string", "value")

type mapModel map[int64]map[string]value

// readMaps reads the maps of keys [0, keys) through the map methods,
// checking that All yields in ascending order of the map keys and agrees
// with Len, Get and Contains.
func readMaps(t *testing.T, m *Map[int64, string, value], keys int) mapModel {
	t.Helper()
	out := mapModel{}
	for k := range int64(keys) {
		m.Bind(k)
		var order []string
		for uk, v := range m.All() {
			order = append(order, uk)
			if out[k] == nil {
				out[k] = map[string]value{}
			}
			out[k][uk] = v
			if g, ok := m.Get(uk); !ok || g != v || !m.Contains(uk) {
				t.Fatalf("key %d: All yields %q = %v, Get returns %v, %v", k, uk, v, g, ok)
			}
		}
		if !slices.IsSorted(order) {
			t.Fatalf("key %d: All yields %q, not in order", k, order)
		}
		if m.Len() != len(order) {
			t.Fatalf("key %d: Len %d, All yields %d", k, m.Len(), len(order))
		}
	}
	return out
}

func equalModels(a, b mapModel) bool {
	return maps.EqualFunc(a, b, func(x, y map[string]value) bool { return maps.Equal(x, y) })
}

func cloneModel(m mapModel) mapModel {
	out := mapModel{}
	for k, v := range m {
		out[k] = maps.Clone(v)
	}
	return out
}

// mutateMaps changes m and the model at random; with reads unset, it
// calls no method that reads a whole map (which waits for a checkpoint
// being taken of the store).
func mutateMaps(m *Map[int64, string, value], model mapModel, rng *rand.Rand, ops, keys, mapKeys int, reads bool) {
	for range ops {
		k := int64(rng.IntN(keys))
		uk := fmt.Sprintf("k%03d", rng.IntN(mapKeys))
		m.Bind(k)
		op := rng.IntN(20)
		if !reads {
			op = 0
		}
		switch op {
		case 19:
			m.Clear()
			delete(model, k)
		case 18:
			// Delete what All yields, while it iterates.
			n := 0
			for uk := range m.All() {
				if n++; n%3 == 0 {
					m.Delete(uk)
					delete(model[k], uk)
				}
			}
		default:
			if rng.IntN(3) == 0 {
				m.Delete(uk)
				delete(model[k], uk)
				break
			}
			v := value{N: int64(rng.IntN(1000)), Name: uk}
			m.Put(uk, v)
			if model[k] == nil {
				model[k] = map[string]value{}
			}
			model[k][uk] = v
		}
		if len(model[k]) == 0 {
			delete(model, k)
		}
	}
}

// TestMap changes the maps of a few keys at random, with a small cache,
// takes checkpoints while they go on changing, and restores each: the maps
// read back as they were at the barrier, in order.
func TestMap(t *testing.T) {
	const keys, mapKeys = 5, 400
	fsys := vfs.NewMem()
	stor := &storage.Storage{FS: fsys, Dir: "/ckpt"}
	_, task := testTask(t, fsys, 0)
	m := OpenMap(task, 0, "map.F", testCodec.EncodeKey, testMapCodec)
	defer m.Store().close()
	m.st.spillAt, m.st.maxCache = 16, 64
	rng := rand.New(rand.NewPCG(5, 6))
	model := mapModel{}
	mutateMaps(m, model, rng, 3000, keys, mapKeys, true)
	if got := readMaps(t, m, keys); !equalModels(got, model) {
		t.Fatalf("maps %v, want %v", got, model)
	}
	for id := int64(1); id <= 3; id++ {
		want := cloneModel(model)
		c, base := m.st.begin(id, id-1)
		mutateMaps(m, model, rng, 40, keys, mapKeys, false) // before the writer
		if err := stor.Prepare(id); err != nil {
			t.Fatal(err)
		}
		files, _, err := m.st.write(c, base, stor)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.State != "map.F" {
				t.Fatalf("file %s is of state %q, want map.F", f.Name, f.State)
			}
		}
		mf := &storage.Manifest{ID: id, Job: "p", MaxParallelism: 16, Mode: config.ExactlyOnce,
			Nodes: []storage.NodeState{{UID: "agg", Name: "agg", Kind: "aggregate", Parallelism: 1, Files: files}}}
		if err := stor.Commit(mf); err != nil {
			t.Fatal(err)
		}
		rcp, rt := testTask(t, fsys, id)
		if main := Open(rt, 0, testCodec); main != nil {
			// The node's main state is another store: it restores empty.
			if err := rcp.RunRestores(); err != nil {
				t.Fatal(err)
			}
			if n := main.Len(); n != 0 {
				t.Errorf("the main state restored %d keys of the map state", n)
			}
			main.close()
		}
		rcp, rt = testTask(t, fsys, id)
		back := OpenMap(rt, 0, "map.F", testCodec.EncodeKey, testMapCodec)
		if err := rcp.RunRestores(); err != nil {
			t.Fatal(err)
		}
		got := readMaps(t, back, keys)
		back.Store().close()
		if !equalModels(got, want) {
			t.Fatalf("checkpoint %d restores to %v, want %v", id, got, want)
		}
		mutateMaps(m, model, rng, 500, keys, mapKeys, true)
		if got := readMaps(t, m, keys); !equalModels(got, model) {
			t.Fatalf("after checkpoint %d: maps %v, want %v", id, got, model)
		}
	}
}

// TestMapReadsOneEntry: a Get of one entry of a large map decodes that
// entry only, and All decodes the values as it reaches them.
func TestMapReadsOneEntry(t *testing.T) {
	fsys := vfs.NewMem()
	_, task := testTask(t, fsys, 0)
	m := OpenMap(task, 0, "map.F", testCodec.EncodeKey, testMapCodec)
	defer m.Store().close()
	m.st.spillAt, m.st.maxCache = 64, 128
	const n = 20000
	m.Bind(7)
	for i := range n {
		m.Put(fmt.Sprintf("e%06d", i), value{N: int64(i)})
	}
	m.st.spill(true) // written, and the cache trimmed
	if len(m.st.cache) > 128 {
		t.Fatalf("the cache holds %d entries after a trim to 128", len(m.st.cache))
	}
	decodes = 0
	v, ok := m.Get("e012345")
	if !ok || v.N != 12345 {
		t.Fatalf("Get = %v, %v", v, ok)
	}
	if decodes != 1 {
		t.Errorf("a Get of one entry of a map of %d decoded %d values, want 1", n, decodes)
	}
	decodes = 0
	i := 0
	for uk, v := range m.All() {
		if uk != fmt.Sprintf("e%06d", i) || v.N != int64(i) {
			t.Fatalf("entry %d of All is %s = %v", i, uk, v)
		}
		if i++; i == 10 {
			break
		}
	}
	if decodes > 10 {
		t.Errorf("reading 10 entries with All decoded %d values", decodes)
	}
	if got := m.Len(); got != n {
		t.Errorf("Len = %d, want %d", got, n)
	}
	m.Clear()
	if got := m.Len(); got != 0 {
		t.Errorf("Len after Clear = %d", got)
	}
}
