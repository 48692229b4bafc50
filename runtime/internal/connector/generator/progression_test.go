package generator

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// TestProgressionCoversOnce walks every subtask's blocks and checks that
// together they hold each number from the origin on exactly once, and
// that locate finds every number in the block that holds it and index
// counts the subtask's numbers before it.
func TestProgressionCoversOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		g := progression{origin: uint64(rng.IntN(1000)), step: uint64(1 + rng.IntN(6)), max: 1 << rng.IntN(8)}
		const n = 5000
		seen := make([]int, n)
		count := make([]uint64, g.step)
		for sub := range g.step {
			for r := uint64(0); ; r++ {
				start, size := g.start(r, sub), g.size(r)
				if start >= g.origin+n {
					break
				}
				for i := range size {
					seq := start + i
					if seq >= g.origin+n {
						break
					}
					seen[seq-g.origin]++
					if got := g.index(seq); got != count[sub] {
						t.Fatalf("%+v: index(%d) = %d, want %d", g, seq, got, count[sub])
					}
					count[sub]++
					if gr, gs, left := g.locate(seq); gr != r || gs != sub || left != size-i {
						t.Fatalf("%+v: locate(%d) = round %d, subtask %d, %d left; want %d, %d, %d", g, seq, gr, gs, left, r, sub, size-i)
					}
				}
			}
		}
		for m, c := range seen {
			if c != 1 {
				t.Fatalf("%+v: number %d held %d times, want once", g, g.origin+uint64(m), c)
			}
		}
	}
}

// TestLegacyPosition reads positions as checkpoints from before blocks
// hold them (the next number; after a rescale also the step and the
// pending numbers): the subtask goes on with the stride it had.
func TestLegacyPosition(t *testing.T) {
	w := codec.NewWriter(nil)
	w.Uvarint(7) // subtask 1 of 3 at its third number
	p, err := decodePosition(storage.SourceState{Position: w.Bytes()}, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := resumed(generatorJob(t, 3, ""), 1, p, 100)
	var got []uint64
	for range 4 {
		seq, _ := s.Next()
		got = append(got, seq)
	}
	if want := []uint64{7, 10, 13, 16}; !slices.Equal(got, want) {
		t.Errorf("old position 7 at parallelism 3 goes on with %v, want %v", got, want)
	}

	w = codec.NewWriter(nil)
	w.Uvarint(21) // rescaled to step 2, with 3 and 8 pending
	w.Uvarint(2)
	w.Uvarint(2)
	w.Uvarint(3)
	w.Uvarint(8)
	p, err = decodePosition(storage.SourceState{Position: w.Bytes()}, 4)
	if err != nil {
		t.Fatal(err)
	}
	s = resumed(generatorJob(t, 2, ""), 0, p, 100)
	got = nil
	for range 5 {
		seq, _ := s.Next()
		got = append(got, seq)
	}
	if want := []uint64{3, 8, 21, 23, 25}; !slices.Equal(got, want) {
		t.Errorf("old rescaled position goes on with %v, want %v", got, want)
	}
}
