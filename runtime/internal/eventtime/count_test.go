package eventtime

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

func encInt(w *codec.Writer, v *int) { w.Varint(int64(*v)) }
func decInt(r *codec.Reader) *int    { v := int(r.Varint()); return &v }

// newCount returns count windows of ints whose accumulator collects them,
// and what they emitted, as "key: ids @ts".
func newCount(size, every uint64) (*CountWindows[int, int, testAcc], *[]string) {
	var out []string
	c := NewCountWindows[int, int, testAcc](size, every, func(a *testAcc, r int) { a.ids = append(a.ids, r) },
		func(k int, a *testAcc, ts int64) { out = append(out, fmt.Sprintf("%d: %v @%d", k, a.ids, ts)) })
	return c, &out
}

func TestCountWindows(t *testing.T) {
	for _, tc := range []struct {
		size, every uint64
		want        []string
	}{
		{3, 3, []string{"1: [0 2 3] @30", "1: [4 5 6] @60", "2: [1 7 8] @80"}},
		{3, 2, []string{"1: [0 2] @20", "2: [1 7] @70", "1: [2 3 4] @40", "1: [4 5 6] @60"}},
	} {
		c, out := newCount(tc.size, tc.every)
		for i, k := range []int{1, 2, 1, 1, 1, 1, 1, 2, 2, 1} {
			c.Add(k, i, int64(i*10))
		}
		slices.Sort(*out)
		slices.Sort(tc.want)
		if !slices.Equal(*out, tc.want) {
			t.Errorf("size %d every %d: got %v, want %v", tc.size, tc.every, *out, tc.want)
		}
	}
}

// TestCountWindowsRestore checks that count windows restored from a
// snapshot taken after any record emit what the ones that took it emit.
// The records' times are out of order: count windows go by arrival, and
// a sliding one keeps its records in that order (its restore once refused
// them as corrupt).
func TestCountWindowsRestore(t *testing.T) {
	keys := []int{1, 2, 1, 3, 1, 2, 2, 1, 3, 3, 1, 2, 1, 1, 2, 3, 1}
	ts := func(i int) int64 { return int64(i * 7 % 11) }
	for _, sz := range [][2]uint64{{4, 4}, {4, 1}, {5, 2}} {
		for cut := range keys {
			a, outA := newCount(sz[0], sz[1])
			for i, k := range keys[:cut] {
				a.Add(k, i, ts(i))
			}
			sec := state.NewSections(0, testMaxParallelism)
			if err := a.Snapshot(sec, testKeyGroup, encTestKey, encTestAcc, encInt); err != nil {
				t.Fatal(err)
			}
			b, outB := newCount(sz[0], sz[1])
			for i := range sec.W {
				if err := b.Restore(sec.W[i].Bytes(), decTestKey, decTestAcc, decInt); err != nil {
					t.Fatal(err)
				}
			}
			*outA = nil
			for i, k := range keys[cut:] {
				a.Add(k, cut+i, ts(cut+i))
				b.Add(k, cut+i, ts(cut+i))
			}
			if !slices.Equal(*outA, *outB) || a.Len() != b.Len() {
				t.Fatalf("%v cut %d: restored emitted %v, want %v", sz, cut, *outB, *outA)
			}
		}
	}
}
