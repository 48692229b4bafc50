package generator

import (
	"math/rand/v2"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// sim is a generator subtask as NextInto moves it, for a function that
// returns records for the sequence numbers below n.
type sim struct {
	position
	round, sub, left uint64
}

func newSim(p position) *sim {
	s := &sim{position: p}
	s.round, s.sub, s.left = p.prog.locate(p.seq)
	return s
}

func (s *sim) next(n uint64) (uint64, bool) {
	for len(s.pending) > 0 {
		seq := s.pending[0].from
		if s.pending[0].n--; s.pending[0].n == 0 {
			s.pending = s.pending[1:]
		} else {
			s.pending[0].from++
		}
		if seq < n {
			return seq, true
		}
	}
	if s.atEnd || s.seq >= n {
		s.atEnd = true
		return 0, false
	}
	seq := s.seq
	if s.left--; s.left > 0 {
		s.seq++
	} else {
		s.round++
		s.seq, s.left = s.prog.start(s.round, s.sub), s.prog.size(s.round)
	}
	return seq, true
}

// TestRescaleExactlyOnce runs a generator through parallelisms 2, 5, 1,
// 3 and 4, each subtask going a random way between restores (through the
// encoded positions, as a checkpoint holds them), and checks that the
// function was called for every sequence number once.
//
// The first subtasks start with blocks of at most 1 (positions from
// before blocks: the stride i, i+P, ...), 4, or MaxBlock numbers; every
// tenth run has up to 300,000 numbers, so that blocks of MaxBlock are
// dealt out too.
func TestRescaleExactlyOnce(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := uint64(rng.IntN(3000))
		if seed%10 == 0 {
			n = uint64(rng.IntN(300000))
		}
		seen := make([]int, n)
		ps := []int{2, 5, 1, 3, 4}
		first := progression{step: uint64(ps[0]), max: []uint64{1, 4, MaxBlock}[seed%3]}
		var subs []*sim
		for i := range ps[0] {
			subs = append(subs, newSim(position{seq: first.start(0, uint64(i)), prog: first}))
		}
		for round := 0; ; round++ {
			for _, s := range subs {
				for range rng.IntN(int(n)/4 + 1) {
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
				subs = append(subs, newSim(rescale(old, ps[round+1], i)))
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
