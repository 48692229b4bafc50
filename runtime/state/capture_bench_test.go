package state

import (
	"fmt"
	"math/rand/v2"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// benchCaptureState is a state of n keys over 128 key groups, added in a
// random order, as a join's or an aggregation's state is.
func benchCaptureState(n int) *Memory[uint64, benchValue] {
	s := NewMemory[uint64, benchValue]()
	s.Bind(func(k uint64) int { return int(benchCodec.Hash(k) >> 57) }, 0, 128)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range rng.Perm(n) {
		v, _ := s.GetOrAdd(uint64(k))
		v.Count, v.Label = int64(k), "a seller's name"
	}
	return s
}

// BenchmarkCaptureFull is the writer's side of a full checkpoint of a
// state of a million keys, per key.
func BenchmarkCaptureFull(b *testing.B) {
	s := benchCaptureState(1 << 20)
	b.ResetTimer()
	for range b.N {
		c := s.Capture(true, 0, s.Epoch(), benchCodec)
		if err := c.Write(func(parts ...[]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<20), "ns/key")
}

// BenchmarkCaptureDelta is the writer's side of a delta of 100,000 keys
// changed at random in a state of a million keys, per key written.
func BenchmarkCaptureDelta(b *testing.B) {
	const n, changed = 1 << 20, 100_000
	s := benchCaptureState(n)
	c := s.Capture(true, 0, s.Epoch(), benchCodec)
	if err := c.Write(func(parts ...[]byte) error { return nil }); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]uint64, changed)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range keys {
			keys[i] = uint64(rng.IntN(n))
		}
		for _, k := range keys {
			v, _ := s.GetOrAdd(k)
			v.Sum++
		}
		since := c.Epoch
		c = s.Capture(false, since, since, benchCodec)
		b.StartTimer()
		if err := c.Write(func(parts ...[]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*changed), "ns/key")
}

// BenchmarkMemoryChurn is Nexmark q4's auctions: a new key a step,
// deleted about 2,000 steps later. With tracking (exactly-once) the
// changes are listed, and an epoch closes every 500,000 steps (a second
// of q4) with a delta.
func BenchmarkMemoryChurn(b *testing.B) {
	for _, tracking := range []bool{false, true} {
		b.Run(fmt.Sprintf("tracking=%v", tracking), func(b *testing.B) {
			s := NewMemory[uint64, benchValue]()
			s.Bind(func(k uint64) int { return int(benchCodec.Hash(k) >> 57) }, 0, 128)
			if tracking {
				s.Track()
			}
			r := rand.New(rand.NewPCG(1, 2))
			var since uint64
			k := uint64(0)
			for b.Loop() {
				v, _ := s.GetOrAdd(k)
				v.Count++
				if k >= 2000 {
					// A bid for one of the oldest auctions, then the
					// oldest closes.
					v, _ := s.GetOrAdd(k - 2000 + uint64(r.IntN(5)))
					v.Sum++
					s.Delete(k - 2000)
				}
				k++
				if tracking && k%500_000 == 0 {
					c := s.Capture(false, since, since, benchCodec)
					if err := c.Write(func(parts ...[]byte) error { return nil }); err != nil {
						b.Fatal(err)
					}
					since = c.Epoch
				}
			}
		})
	}
}
