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
