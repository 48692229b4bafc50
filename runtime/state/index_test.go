package state

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// TestIndexGrows: a state whose index turns from a map into a table as
// it grows past bigState keys keeps every key, and so does one restored
// from its captures, a full one and a delta with new keys and
// deletions: into a state told how many keys to expect (a table from the
// start, filled in sorted batches) and into one not told (a map that
// turns into a table during the restore).
func TestIndexGrows(t *testing.T) {
	const keys = 3 * bigState
	s := newTestState()
	for k := range keys {
		s.Put(k, &testValue{N: int64(k)})
		if k == bigState-2 && s.idx.big {
			t.Fatalf("the index of %d keys is a table already", k+1)
		}
	}
	if !s.idx.big {
		t.Fatalf("the index of %d keys is still a map", keys)
	}
	for k := 0; k < keys; k += 3 {
		s.Delete(k)
	}
	for k := range keys {
		v := s.Get(k)
		if deleted := k%3 == 0; deleted != (v == nil) || v != nil && v.N != int64(k) {
			t.Fatalf("Get(%d) = %v after the deletion of every third key", k, v)
		}
	}
	full := writeCapture(t, s.Capture(true, 0, s.Epoch(), testCodec))
	rng := rand.New(rand.NewPCG(3, 4))
	mutate(s, rng, 50_000, keys+1000)
	delta := writeCapture(t, s.Capture(false, 1, 1, testCodec))
	want := values(s)
	for _, reserve := range []int{0, keys * 2 / 3} {
		back := newTestState()
		back.Reserve(reserve)
		for _, w := range []written{full, delta} {
			for kg, sec := range w.sections {
				if err := back.RestoreSection(kg, sec, !w.full, testCodec); err != nil {
					t.Fatal(err)
				}
			}
		}
		back.Restored()
		if got := values(back); !maps.Equal(got, want) || back.Len() != len(want) {
			t.Errorf("reserve %d: restored %d keys (Len %d), want %d", reserve, len(got), back.Len(), len(want))
		}
		for k, v := range want {
			if g := back.Get(k); g == nil || *g != v {
				t.Fatalf("reserve %d: Get(%d) = %v, want %v", reserve, k, g, v)
			}
		}
	}
}

// TestIndexDense: integer keys that stay close together (a window of ids
// moving up, some below its base, negative ones too) are found in pages,
// as a map would find them, through additions and deletions that empty
// pages at both ends; keys too sparse for pages then move to the map,
// every one kept.
func TestIndexDense(t *testing.T) {
	x := newIndex[int64, int]()
	if !x.dense {
		t.Fatal("the index of int64 keys does not start in pages")
	}
	if s := newIndex[string, int](); s.dense {
		t.Fatal("the index of string keys is in pages")
	}
	model := map[int64]*entry[int64, int]{}
	check := func(when string) {
		t.Helper()
		if x.len() != len(model) {
			t.Fatalf("%s: len %d, want %d", when, x.len(), len(model))
		}
		for k, e := range model {
			if got := x.get(k); got != e {
				t.Fatalf("%s: get(%d) = %p, want %p", when, k, got, e)
			}
		}
		n := 0
		x.all(func(e *entry[int64, int]) bool {
			if model[e.key] != e {
				t.Fatalf("%s: all yields key %d, which is not there", when, e.key)
			}
			n++
			return true
		})
		if n != len(model) {
			t.Fatalf("%s: all yields %d entries, want %d", when, n, len(model))
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	next := int64(-3000) // ids from below 0 up
	for step := range 200_000 {
		var k int64
		switch r := rng.IntN(10); {
		case r < 4:
			k = next
			next++
		case r < 5:
			k = next - 2000 - rng.Int64N(1000) // an old one, below the pages maybe
		default:
			k = next - 1 - rng.Int64N(500)
		}
		if e, _ := x.lookup(k); e != model[k] {
			t.Fatalf("step %d: lookup(%d) = %p, want %p", step, k, e, model[k])
		}
		if model[k] == nil {
			e := &entry[int64, int]{key: k}
			model[k] = e
			x.add(0, e)
		} else if rng.IntN(2) == 0 {
			if e := x.remove(k); e != model[k] {
				t.Fatalf("step %d: remove(%d) = %p, want %p", step, k, e, model[k])
			}
			delete(model, k)
		}
		// Keep the window of live keys short, as expiries do.
		for old := range model {
			if step%64 != 0 {
				break
			}
			if old < next-3000 {
				x.drop(old)
				delete(model, old)
			}
		}
		if step%20_000 == 0 {
			check("dense")
		}
	}
	if !x.dense || len(x.pages) > 64 {
		t.Fatalf("a window of %d keys: dense %v with %d pages, want in at most 64 pages", len(model), x.dense, len(x.pages))
	}
	check("dense at the end")
	for i := range 100 {
		k := int64(i) << 40
		e := &entry[int64, int]{key: k}
		model[k] = e
		x.add(0, e)
	}
	if x.dense {
		t.Fatal("keys 2^40 apart are still in pages")
	}
	check("moved to the map")
}
