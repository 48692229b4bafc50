package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
)

var testMapCodec = MapCodec(testCodec.Hash, testCodec.EncodeKey, testCodec.DecodeKey, StringKeys[string](),
	testCodec.EncodeValue, testCodec.DecodeValue, "string", "value")

func newTestMap() *MemoryMap[int, string, testValue] {
	m := NewMemoryMap[int, string, testValue]()
	m.Store().Bind(func(k MapKey[int, string]) int { return k.K % testGroups }, 0, testGroups)
	return m
}

// mapContents reads every key's map through the map methods, checking
// that All yields in ascending order of the map keys and agrees with Len
// and Get.
func mapContents(t *testing.T, m *MemoryMap[int, string, testValue], keys int) map[int]map[string]testValue {
	t.Helper()
	out := map[int]map[string]testValue{}
	for k := range keys {
		m.Bind(k)
		var order []string
		for uk, v := range m.All() {
			order = append(order, uk)
			if out[k] == nil {
				out[k] = map[string]testValue{}
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

func equalMaps(a, b map[int]map[string]testValue) bool {
	return maps.EqualFunc(a, b, func(x, y map[string]testValue) bool { return maps.Equal(x, y) })
}

// mutateMap changes m and the model at random: puts, deletes, clears. It
// returns the number of entries it changed, at most.
func mutateMap(m *MemoryMap[int, string, testValue], model map[int]map[string]testValue, rng *rand.Rand, ops, keys, mapKeys int) (changed int) {
	for range ops {
		changed++
		k := rng.IntN(keys)
		uk := fmt.Sprintf("k%03d", rng.IntN(mapKeys))
		m.Bind(k)
		switch rng.IntN(10) {
		case 0, 1, 2, 3, 4:
			v := testValue{N: int64(rng.IntN(1000)), Name: uk}
			m.Put(uk, v)
			if model[k] == nil {
				model[k] = map[string]testValue{}
			}
			model[k][uk] = v
		case 5, 6, 7:
			m.Delete(uk)
			delete(model[k], uk)
			if len(model[k]) == 0 {
				delete(model, k)
			}
		case 8:
			if v, ok := m.Get(uk); ok {
				v.N++ // changes nothing: Get returns a copy
			}
		case 9:
			if rng.IntN(10) == 0 {
				changed += len(model[k])
				m.Clear()
				delete(model, k)
			}
		}
	}
	return changed
}

// TestMemoryMap changes maps of several keys at random, captures them
// (full and deltas, while the maps keep changing) and restores the
// captures: the maps read back as they were at the barrier, and a delta
// holds the changed entries only.
func TestMemoryMap(t *testing.T) {
	const keys, mapKeys = 6, 300
	rng := rand.New(rand.NewPCG(3, 4))
	m := newTestMap()
	model := map[int]map[string]testValue{}
	mutateMap(m, model, rng, 3000, keys, mapKeys)
	if got := mapContents(t, m, keys); !equalMaps(got, model) {
		t.Fatalf("maps %v, want %v", got, model)
	}
	var chain []written
	var since uint64
	prevChanged := 0 // the entries changed after the capture before
	for i := range 5 {
		full := i == 0
		want := map[int]map[string]testValue{}
		for k, mm := range model {
			want[k] = maps.Clone(mm)
		}
		c := m.Store().Capture(full, since, since, testMapCodec)
		since = c.Epoch
		// The maps change before the capture is written.
		changed := mutateMap(m, model, rng, 200, keys, mapKeys)
		w := writeMapCapture(t, c)
		chain = append(chain, w)
		if !full {
			// The changes since the capture before: at most one entry
			// per operation made in between.
			n := 0
			for _, s := range w.sections {
				for r := codec.NewReader(s); r.More(); r.Nested() {
					n++
				}
			}
			if n > prevChanged || n == 0 {
				t.Errorf("delta %d holds %d entries, want 1 to %d (the entries changed since the capture before), of %d", i, n, prevChanged, m.Store().Len())
			}
		}
		prevChanged = changed
		back := newTestMap()
		for _, w := range chain {
			for kg, sec := range w.sections {
				if err := back.Store().RestoreSection(kg, sec, !w.full, testMapCodec); err != nil {
					t.Fatal(err)
				}
			}
		}
		back.Store().Restored()
		if got := mapContents(t, back, keys); !equalMaps(got, want) {
			t.Fatalf("capture %d restores to %v, want %v", i, got, want)
		}
		// The restored maps go on like the others.
		mutateMap(back, want, rand.New(rand.NewPCG(uint64(i), 1)), 500, keys, mapKeys)
		if got := mapContents(t, back, keys); !equalMaps(got, want) {
			t.Fatalf("after capture %d, the restored maps changed to %v, want %v", i, got, want)
		}
	}
}

func writeMapCapture(t *testing.T, c *Capture[MapKey[int, string], testValue]) written {
	w := written{full: c.Full}
	err := c.Write(func(parts ...[]byte) error {
		var sec []byte
		for _, p := range parts {
			sec = append(sec, p...)
		}
		w.sections = append(w.sections, sec)
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	return w
}

// TestMapCodecOrder: the entries of a key are written after the key, in
// the order of their map keys, for integer map keys too (negative ones
// first).
func TestMapCodecOrder(t *testing.T) {
	c := MapCodec(testCodec.Hash, testCodec.EncodeKey, testCodec.DecodeKey, IntKeys[int32](),
		testCodec.EncodeValue, testCodec.DecodeValue, "int32", "value")
	var prev []byte
	for _, uk := range []int32{-1 << 31, -5, -1, 0, 3, 1 << 20} {
		w := codec.NewWriter(nil)
		c.EncodeKey(w, MapKey[int, int32]{K: 7, UK: uk})
		if string(w.Bytes()) <= string(prev) {
			t.Errorf("map key %d encodes before the one before it", uk)
		}
		prev = slices.Clone(w.Bytes())
		if got := c.DecodeKey(codec.NewReader(w.Bytes())); got != (MapKey[int, int32]{K: 7, UK: uk}) {
			t.Errorf("map key %d reads back as %v", uk, got)
		}
	}
}
