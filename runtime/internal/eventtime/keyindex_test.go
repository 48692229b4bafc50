package eventtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKeyIndex checks the index against a map on keys that stay dense,
// grow down, spread out until the index turns into a map, and sit at the
// ends of int64.
func TestKeyIndex(t *testing.T) {
	type id int64 // a named integer key takes the array too
	gens := map[string]func(r *rand.Rand, i int) int64{
		"dense":  func(r *rand.Rand, i int) int64 { return 1000 + r.Int64N(500) },
		"down":   func(r *rand.Rand, i int) int64 { return 1<<40>>1 - int64(i) - r.Int64N(10) },
		"sparse": func(r *rand.Rand, i int) int64 { return r.Int64() },
		"spread": func(r *rand.Rand, i int) int64 { return int64(i) * int64(i) },
		"extreme": func(r *rand.Rand, i int) int64 {
			return []int64{math.MaxInt64, math.MinInt64, -1, 0}[r.IntN(4)] - r.Int64N(100)
		},
	}
	for name, gen := range gens {
		r := rand.New(rand.NewPCG(1, 2))
		x := newKeyIndex[id](true, 0)
		want := map[id]int32{}
		for i := range 5000 {
			k := id(gen(r, i))
			if r.IntN(4) == 0 {
				k = id(gen(r, r.IntN(i+1)))
			}
			got, ok := x.get(k)
			w, wok := want[k]
			if ok != wok || got != w {
				t.Fatalf("%s: record %d, key %d: got %d %v, want %d %v", name, i, k, got, ok, w, wok)
			}
			if !ok || r.IntN(8) == 0 {
				want[k] = int32(i)
				x.put(k, int32(i))
			}
		}
		for k, w := range want {
			if got, ok := x.get(k); !ok || got != w {
				t.Fatalf("%s: key %d: got %d %v, want %d", name, k, got, ok, w)
			}
		}
		if dense := x.m == nil; dense != (name == "dense" || name == "down") {
			t.Errorf("%s: array %v after %d keys", name, dense, len(want))
		}
	}
}
