package generator

import (
	"math/rand/v2"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// resumed is subtask sub of a generator of the numbers below n in job j,
// resumed at p as a restore resumes it.
func resumed(j *connectortest.Env, sub int, p position, n uint64) *Source[uint64] {
	g := NewSource(j, 0, sub, upTo(n))
	g.resume(p)
	return g
}

// sourceState is g's position as its Snapshot writes it.
func sourceState(g *Source[uint64]) storage.SourceState {
	return storage.SourceState{Subtask: g.sub, Position: encodePosition(position{seq: g.seq, prog: g.prog, pending: g.pending}), AtEnd: g.done}
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
		j := generatorJob(t, ps[0], "")
		var subs []*Source[uint64]
		for i := range ps[0] {
			subs = append(subs, resumed(j, i, position{seq: first.start(0, uint64(i)), prog: first}, n))
		}
		for round := 0; ; round++ {
			for _, s := range subs {
				budget := rng.IntN(int(n)/4 + 1)
				if rng.IntN(2) == 0 {
					// As a generated chain reads: in runs.
					for budget > 0 {
						got, more := readRun(s, rng, budget)
						for _, seq := range got {
							seen[seq]++
						}
						if budget -= len(got); !more {
							break
						}
					}
					continue
				}
				for range budget {
					seq, ok := s.Next()
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
				p, err := decodePosition(sourceState(s), ps[round])
				if err != nil {
					t.Fatal(err)
				}
				old = append(old, p)
			}
			j = generatorJob(t, ps[round+1], "")
			subs = nil
			for i := range ps[round+1] {
				subs = append(subs, resumed(j, i, rescale(old, ps[round+1], i), n))
			}
		}
		for _, s := range subs {
			for _, seq := range connectortest.ReadAll[uint64](s) {
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
