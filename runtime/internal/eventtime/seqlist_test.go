package eventtime

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSeqList checks that a seqList gives back every number added, in
// order, whether the numbers fit in offsets from the first or not: a
// live pane's ascending numbers, a restored pane's numbers in any order,
// and numbers more than 2^32 apart.
func TestSeqList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(i int, prev uint64) uint64{
		"ascending":     func(i int, prev uint64) uint64 { return prev + 1 + uint64(rng.IntN(5)) },
		"any order":     func(i int, prev uint64) uint64 { return uint64(rng.IntN(1000)) },
		"far apart":     func(i int, prev uint64) uint64 { return prev + uint64(rng.IntN(3))<<31 },
		"near the top":  func(i int, prev uint64) uint64 { return math.MaxUint64 - uint64(rng.IntN(1000)) },
		"from the base": func(i int, prev uint64) uint64 { return 7 },
	}
	for name, next := range cases {
		var l seqList
		var want []uint64
		prev := uint64(rng.IntN(1 << 20))
		for i := range 3000 {
			if i%500 == 0 {
				l.double()
			}
			prev = next(i, prev)
			l.add(prev)
			want = append(want, prev)
		}
		for i, w := range want {
			if g := l.at(i); g != w {
				t.Fatalf("%s: number %d is %d, want %d", name, i, g, w)
			}
		}
		slices.Sort(want)
		s := newSeqList(slices.Clone(want))
		for i, w := range want {
			if g := s.at(i); g != w {
				t.Fatalf("%s: sorted, number %d is %d, want %d", name, i, g, w)
			}
		}
	}
	// A live pane's numbers take 4 bytes each.
	var l seqList
	for i := range 100 {
		l.add(1<<40 + uint64(i)*3)
	}
	if l.wide != nil || len(l.off) != 100 {
		t.Errorf("ascending numbers close together: %d wide, %d offsets; want 0 and 100", len(l.wide), len(l.off))
	}
}
