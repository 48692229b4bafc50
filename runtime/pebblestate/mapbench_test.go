package pebblestate

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// benchEntries is the size of the one key's map in BenchmarkMapEntry.
const benchEntries = 1 << 20

// benchEvery is how many operations BenchmarkMapEntry makes between two
// barriers: at each, what a checkpoint writes of the state is written
// (memory: a delta capture encoded; pebble: the changed values written
// to the store).
const benchEvery = 10000

// fieldState is the same data as a map state, in a plain field of the
// state struct: one value, read and written whole.
type fieldState struct{ M map[int64]int64 }

var fieldCodec = &state.Codec[int64, fieldState]{
	Hash:      func(k int64) uint64 { return keygroup.HashInt64(k) },
	EncodeKey: func(w *codec.Writer, k int64) { w.Varint(k) },
	DecodeKey: func(r *codec.Reader) int64 { return r.Varint() },
	EncodeValue: func(w *codec.Writer, v *fieldState) {
		m := w.Begin()
		w.Uvarint(uint64(len(v.M)))
		for k, x := range v.M {
			w.Varint(k)
			w.Varint(x)
		}
		w.End(m)
	},
	DecodeValue: func(r *codec.Reader) *fieldState {
		n := r.Nested()
		c := int(n.Uvarint())
		v := &fieldState{M: make(map[int64]int64, c)}
		for range c {
			k := n.Varint()
			v.M[k] = n.Varint()
		}
		return v
	},
}

var intMapCodec = state.MapCodec(fieldCodec.Hash, fieldCodec.EncodeKey, fieldCodec.DecodeKey, state.IntKeys[int64](),
	func(w *codec.Writer, v *int64) { w.Varint(*v) }, func(r *codec.Reader) *int64 { v := r.Varint(); return &v }, "int64", "int64")

// BenchmarkMapEntry: an operation reads and writes one entry of a key's
// map of 2^20 entries, at random, as a pipegen.MapState (mapstate) and as
// a Go map in a field of the state struct (field), on both backends, with
// a barrier every benchEvery operations (the first, a full one on memory,
// before the timer starts).
//
//	go test ./runtime/pebblestate -run '^$' -bench MapEntry -benchtime 200000x
func BenchmarkMapEntry(b *testing.B) {
	for _, backend := range []string{"memory", "pebble"} {
		for _, shape := range []string{"mapstate", "field"} {
			b.Run(fmt.Sprintf("%s/%s", backend, shape), func(b *testing.B) {
				op, barrier, done := benchState(b, backend, shape)
				defer done()
				barrier(0) // the state as filled is in a checkpoint already
				rng := rand.New(rand.NewPCG(1, 2))
				var inBarriers time.Duration
				barriers := 0
				b.ResetTimer()
				for i := range b.N {
					op(rng.Int64N(benchEntries))
					if i%benchEvery == benchEvery-1 {
						t0 := time.Now()
						barrier(int64(i / benchEvery))
						inBarriers += time.Since(t0)
						barriers++
					}
				}
				if barriers > 0 {
					b.ReportMetric(float64(inBarriers.Microseconds())/1000/float64(barriers), "ms/barrier")
				}
			})
		}
	}
}

// benchState fills the state of one key (7) with benchEntries entries and
// returns an operation on entry uk, a barrier and a cleanup.
func benchState(b *testing.B, backend, shape string) (op func(uk int64), barrier func(id int64), done func()) {
	const k = 7
	switch backend + "/" + shape {
	case "memory/mapstate":
		m := state.NewMemoryMap[int64, int64, int64]()
		m.Store().Bind(func(state.MapKey[int64, int64]) int { return 0 }, 0, 1)
		m.Bind(k)
		for uk := range int64(benchEntries) {
			m.Put(uk, uk)
		}
		var since uint64
		return func(uk int64) {
				v, _ := m.Get(uk)
				m.Put(uk, v+1)
			}, func(int64) {
				c := m.Store().Capture(since == 0, since, since, intMapCodec)
				since = c.Epoch
				c.Write(func(...[]byte) error { return nil })
			}, func() {}
	case "memory/field":
		s := state.NewMemory[int64, fieldState]()
		s.Bind(func(int64) int { return 0 }, 0, 1)
		v := &fieldState{M: make(map[int64]int64, benchEntries)}
		for uk := range int64(benchEntries) {
			v.M[uk] = uk
		}
		s.Put(k, v)
		var since uint64
		return func(uk int64) {
				v := s.Get(k)
				v.M[uk]++
			}, func(int64) {
				c := s.Capture(since == 0, since, since, fieldCodec)
				since = c.Epoch
				c.Write(func(...[]byte) error { return nil })
			}, func() {}
	case "pebble/mapstate":
		_, task := testTask(b, vfs.NewMem(), 0)
		m := OpenMap(task, 0, "map.M", fieldCodec.EncodeKey, intMapCodec)
		m.Bind(k)
		for uk := range int64(benchEntries) {
			m.Put(uk, uk)
		}
		m.st.spill(true)
		return func(uk int64) {
				v, _ := m.Get(uk)
				m.Put(uk, v+1)
			}, func(int64) { m.st.spill(true) },
			func() { m.st.close() }
	case "pebble/field":
		_, task := testTask(b, vfs.NewMem(), 0)
		s := Open(task, 0, fieldCodec)
		v := &fieldState{M: make(map[int64]int64, benchEntries)}
		for uk := range int64(benchEntries) {
			v.M[uk] = uk
		}
		s.Put(k, v)
		s.spill(true)
		return func(uk int64) {
				v := s.Get(k)
				v.M[uk]++
			}, func(int64) { s.spill(true) },
			func() { s.close() }
	}
	panic(backend + "/" + shape)
}
