package generator

import (
	"math/rand/v2"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// sim is a generator subtask as Next moves it, for a function that
// returns records for the sequence numbers below n.
type sim struct{ position }

func (s *sim) next(n uint64) (uint64, bool) {
	for len(s.pending) > 0 {
		seq := s.pending[0]
		s.pending = s.pending[1:]
		if seq < n {
			return seq, true
		}
	}
	if s.atEnd || s.seq >= n {
		s.atEnd = true
		return 0, false
	}
	seq := s.seq
	s.seq += s.step
	return seq, true
}

// TestRescaleExactlyOnce runs a generator through parallelisms 2, 5, 1,
// 3 and 4, each subtask going a random way between restores (through the
// encoded positions, as a checkpoint holds them), and checks that the
// function was called for every sequence number once.
func TestRescaleExactlyOnce(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := uint64(rng.IntN(3000))
		seen := make([]int, n)
		ps := []int{2, 5, 1, 3, 4}
		var subs []*sim
		for i := range ps[0] {
			subs = append(subs, &sim{position{seq: uint64(i), step: uint64(ps[0])}})
		}
		for round := 0; ; round++ {
			for _, s := range subs {
				for range rng.IntN(400) {
					seq, ok := s.next(n)
					if !ok {
						break
					}
					seen[seq]++
				}
			}
			if round+1 == len(ps) {
				break
			}
			// Checkpoint: encode, as Snapshot does; restore at the next
			// parallelism.
			var old []position
			for _, s := range subs {
				st := storage.SourceState{Position: encodePosition(s.position), AtEnd: s.atEnd}
				p, err := decodePosition(st, ps[round])
				if err != nil {
					t.Fatal(err)
				}
				old = append(old, p)
			}
			subs = nil
			for i := range ps[round+1] {
				subs = append(subs, &sim{rescale(old, ps[round+1], i)})
			}
		}
		for _, s := range subs {
			for {
				seq, ok := s.next(n)
				if !ok {
					break
				}
				seen[seq]++
			}
		}
		for seq, c := range seen {
			if c != 1 {
				t.Fatalf("seed %d: sequence number %d called %d times, want once", seed, seq, c)
			}
		}
	}
}
