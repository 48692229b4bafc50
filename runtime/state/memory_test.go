package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
)

type testValue struct {
	N    int64
	Name string
}

var testCodec = &Codec[int, testValue]{
	Hash:      func(k int) uint64 { return uint64(k) },
	EncodeKey: func(w *codec.Writer, k int) { w.Varint(int64(k)) },
	DecodeKey: func(r *codec.Reader) int { return int(r.Varint()) },
	EncodeValue: func(w *codec.Writer, v *testValue) {
		m := w.Begin()
		w.Varint(v.N)
		w.String(v.Name)
		w.End(m)
	},
	DecodeValue: func(r *codec.Reader) *testValue {
		n := r.Nested()
		return &testValue{N: n.Varint(), Name: n.String()}
	},
}

// testCodecTo is testCodec with DecodeValueTo: a restore takes its
// values from slabs.
var testCodecTo = func() *Codec[int, testValue] {
	c := *testCodec
	c.DecodeValueTo = func(r *codec.Reader, v *testValue) {
		n := r.Nested()
		v.N, v.Name = n.Varint(), n.String()
	}
	return &c
}()

const testGroups = 8

func newTestState() *Memory[int, testValue] {
	s := NewMemory[int, testValue]()
	s.Bind(func(k int) int { return k % testGroups }, 0, testGroups)
	return s
}

// values copies the state's contents.
func values(s *Memory[int, testValue]) map[int]testValue {
	out := map[int]testValue{}
	for k, v := range s.All {
		out[k] = *v
	}
	return out
}

// written is what one capture wrote: its sections by key group.
type written struct {
	full     bool
	sections [][]byte
}

func writeCapture(t *testing.T, c *Capture[int, testValue]) written {
	w := written{full: c.Full}
	err := c.Write(func(parts ...[]byte) error {
		var sec []byte
		for _, p := range parts {
			sec = append(sec, p...)
		}
		w.sections = append(w.sections, sec)
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	return w
}

// restore makes a state from a full capture and the deltas after it,
// once with values decoded one by one and once into slabs
// (DecodeValueTo), which must restore the same.
func restore(t *testing.T, chain []written) map[int]testValue {
	t.Helper()
	var out [2]map[int]testValue
	for i, c := range []*Codec[int, testValue]{testCodec, testCodecTo} {
		s := newTestState()
		for _, w := range chain {
			for kg, sec := range w.sections {
				// The restore is given a copy, overwritten once read:
				// nothing restored may point into it.
				sec = append([]byte(nil), sec...)
				if err := s.RestoreSection(kg, sec, !w.full, c); err != nil {
					t.Fatal(err)
				}
				clear(sec)
			}
		}
		s.Restored()
		out[i] = values(s)
	}
	if !maps.Equal(out[0], out[1]) {
		t.Fatalf("restored into slabs, the state differs: %d keys, want %d", len(out[1]), len(out[0]))
	}
	return out[0]
}

// mutate changes the state at random as an operator would: new keys,
// values changed through Get or GetOrAdd, values replaced with Put,
// deletions.
func mutate(s *Memory[int, testValue], rng *rand.Rand, ops, keys int) {
	for range ops {
		k := rng.IntN(keys)
		switch rng.IntN(5) {
		case 4:
			had := s.idx.get(k) != nil // not Get: it counts k as changed
			v, added := s.GetOrAdd(k)
			if added == had || added && *v != (testValue{}) {
				panic(fmt.Sprintf("GetOrAdd(%d) = %+v, added %v; Get found a value: %v", k, *v, added, had))
			}
			v.N += 10
			v.Name = fmt.Sprint("added to ", v.N)
		case 0, 1:
			if v := s.Get(k); v != nil {
				v.N++
				v.Name = fmt.Sprint("changed ", v.N)
			} else {
				s.Put(k, &testValue{N: 1, Name: "new"})
			}
		case 2:
			s.Put(k, &testValue{N: int64(rng.IntN(1000)), Name: "put"})
		case 3:
			s.Delete(k)
		}
	}
}

// TestMemoryGetOrAdd: GetOrAdd adds a zero value to a key that has none,
// and returns the value that Get returns to one that has.
func TestMemoryGetOrAdd(t *testing.T) {
	s := newTestState()
	v, added := s.GetOrAdd(3)
	if !added || *v != (testValue{}) {
		t.Fatalf("GetOrAdd of a new key = %+v, added %v; want a zero value, added", *v, added)
	}
	v.N = 7
	if got := s.Get(3); got != v {
		t.Fatalf("Get after GetOrAdd = %p, want the value GetOrAdd returned, %p", got, v)
	}
	s.Put(4, &testValue{N: 9})
	if v, added := s.GetOrAdd(4); added || v.N != 9 {
		t.Fatalf("GetOrAdd of a key that has a value = %+v, added %v; want N 9, not added", *v, added)
	}
	s.Delete(3)
	if v, added := s.GetOrAdd(3); !added || v.N != 0 {
		t.Fatalf("GetOrAdd of a deleted key = %+v, added %v; want a zero value, added", *v, added)
	}
	if got, want := values(s), map[int]testValue{3: {}, 4: {N: 9}}; !maps.Equal(got, want) {
		t.Fatalf("state %v, want %v", got, want)
	}
}

// TestMemoryCaptures takes captures of a state that keeps changing while
// each capture is written by another goroutine, full ones and deltas,
// some given up: a full capture and the deltas on top of it always
// restore to the state as it was at the barrier of the last of them.
func TestMemoryCaptures(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		keys := 50 + rng.IntN(500)
		s := newTestState()
		mutate(s, rng, 2*keys, keys)
		// chain holds the captures of the newest "completed" checkpoint:
		// a full one and the deltas after it; epoch is what it captured.
		var chain []written
		var epoch uint64
		for round := range 30 {
			want := values(s)
			full := len(chain) == 0 || rng.IntN(6) == 0
			since := epoch
			c := s.Capture(full, since, epoch, testCodec)
			done, gate := make(chan written), make(chan struct{})
			go func() { <-gate; done <- writeCapture(t, c) }()
			// The subtask goes on meanwhile, changing values before the
			// writer starts (they are copied on write), then while it
			// writes.
			mutate(s, rng, keys/4, keys)
			close(gate)
			mutate(s, rng, keys/2+rng.IntN(keys), keys)
			w := <-done
			if rng.IntN(5) == 0 {
				// This checkpoint fails: the next one builds on the one
				// before, and must hold this one's changes too.
				continue
			}
			if full {
				chain = []written{w}
			} else {
				chain = append(chain, w)
			}
			epoch = c.Epoch
			if got := restore(t, chain); !maps.Equal(got, want) {
				t.Fatalf("seed %d, round %d (full %v): the restored state differs from the state at the barrier: %d keys, want %d", seed, round, full, len(got), len(want))
			}
		}
		// An abandoned capture ends the copying on write.
		c := s.Capture(false, epoch, epoch, testCodec)
		c.Abandon()
		if s.InFlight() != nil {
			t.Error("a capture given up is still in flight")
		}
		mutate(s, rng, keys, keys)
	}
}

// TestMemoryDeltaSize: after a full capture, a delta holds only the keys
// changed since, and the lists of changes that no delta needs are
// dropped.
func TestMemoryDeltaSize(t *testing.T) {
	s := newTestState()
	const keys = 10_000
	for k := range keys {
		s.Put(k, &testValue{N: int64(k), Name: "a value of about thirty bytes."})
	}
	size := func(w written) (n int) {
		for _, sec := range w.sections {
			n += len(sec)
		}
		return n
	}
	c := s.Capture(true, 0, s.Epoch(), testCodec)
	full := size(writeCapture(t, c))
	for k := 0; k < keys; k += 100 {
		s.Get(k).N++
	}
	s.Delete(1)
	c = s.Capture(false, c.Epoch, c.Epoch, testCodec)
	delta := writeCapture(t, c)
	if got := restore(t, []written{{full: true, sections: nil}, delta}); len(got) != keys/100 {
		t.Errorf("the delta holds %d values, want the %d changed", len(got), keys/100)
	}
	if d := size(delta); d > full/50 {
		t.Errorf("a delta of 1%% of the keys is %d bytes, %.1f%% of the full %d", d, 100*float64(d)/float64(full), full)
	}
	if len(s.pending) != 1 {
		t.Errorf("%d lists of changes kept, want 1 (the last epoch's)", len(s.pending))
	}
	// A delta after a failed one holds the changes of both epochs.
	s.Get(3).N++
	c2 := s.Capture(false, c.Epoch-1, c.Epoch-1, testCodec)
	got := restore(t, []written{{full: true}, writeCapture(t, c2)})
	if _, ok := got[3]; !ok || len(got) != keys/100+1 {
		t.Errorf("the delta after a failed one holds %d values, want %d", len(got), keys/100+1)
	}
}

// TestMemoryDeltasLarge: the deltas on top of the full capture of a
// large state (indexed by a table, where a restore applies them in
// batches sorted by the keys' homes) restore the state as it was at the
// barrier of the last one: values changed and replaced, keys deleted,
// deleted and added again, and added.
func TestMemoryDeltasLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	const keys = 3 * bigState / 2
	s := newTestState()
	for k := range keys {
		s.Put(k, &testValue{N: int64(k), Name: "initial"})
	}
	c := s.Capture(true, 0, s.Epoch(), testCodec)
	chain := []written{writeCapture(t, c)}
	for round := range 4 {
		mutate(s, rng, keys/3, keys+keys/4)
		want := values(s)
		d := s.Capture(false, c.Epoch, c.Epoch, testCodec)
		chain = append(chain, writeCapture(t, d))
		c = d
		if got := restore(t, chain); !maps.Equal(got, want) {
			t.Fatalf("round %d: the restored state differs from the state at the barrier: %d keys, want %d", round, len(got), len(want))
		}
	}
}

// TestMemoryReusesEntries: the entries of deleted keys are used again for
// new keys once no list of changes holds them, with a zero value: keys
// that come and go (Nexmark q4's auctions) then cost no allocation.
func TestMemoryReusesEntries(t *testing.T) {
	s := newTestState()
	next := 0
	churn := func(n int) {
		for range n {
			k := next
			next++
			v, added := s.GetOrAdd(k)
			if !added || *v != (testValue{}) {
				t.Fatalf("GetOrAdd of new key %d = %+v, added %v; want a zero value, added", k, *v, added)
			}
			v.N, v.Name = int64(k), "live"
			if k >= 100 {
				s.Delete(k - 100) // 100 keys live
			}
		}
	}
	churn(10_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	churn(10_000)
	runtime.ReadMemStats(&after)
	// Without reuse: a slab a few keys, a page of the index every 256.
	if n := after.Mallocs - before.Mallocs; n > 100 {
		t.Errorf("10000 keys added and deleted took %d allocations, want almost none", n)
	}
	got := values(s)
	if len(got) != 100 {
		t.Fatalf("%d keys, want 100", len(got))
	}
	for k := next - 100; k < next; k++ {
		if got[k] != (testValue{N: int64(k), Name: "live"}) {
			t.Fatalf("key %d = %+v, want its own value", k, got[k])
		}
	}
}

// TestMemoryAllDeletes: All yields every key once, also when yield
// deletes keys (which compacts the key groups' lists): a key deleted
// before its turn is not yielded.
func TestMemoryAllDeletes(t *testing.T) {
	s := newTestState()
	const keys = 2000
	for k := range keys {
		s.GetOrAdd(k)
	}
	seen := map[int]int{}
	for k := range s.All {
		seen[k]++
		// The next keys of k's group, which come after it in the list.
		for d := 1; d <= 4; d++ {
			s.Delete(k + d*testGroups)
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("key %d yielded %d times", k, n)
		}
	}
	if len(seen) != s.Len() {
		t.Errorf("%d keys yielded, want the %d left after the deletions", len(seen), s.Len())
	}
}

// TestMemoryChurnWithDeltas: keys that come and go within an epoch, as
// q4's auctions do, while checkpoints are taken: they are written in no
// delta, their entries are used again for new keys in the same epoch,
// and every chain of captures restores the state as it was at its
// barrier, also when a key of the base is deleted and added again in an
// epoch (its deletion must come before its new value).
func TestMemoryChurnWithDeltas(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 11))
		s := newTestState()
		const base = 1000
		for k := range base {
			v, _ := s.GetOrAdd(k)
			v.N, v.Name = int64(k), "base"
		}
		next := base
		churn := func(n int) {
			for range n {
				k := next
				next++
				v, _ := s.GetOrAdd(k)
				v.N, v.Name = int64(k), "churn"
				if k-base >= 50 {
					s.Delete(k - 50) // 50 churning keys live
				}
				switch b := rng.IntN(base); rng.IntN(20) {
				case 0: // a base key deleted and added again
					s.Delete(b)
					v, _ := s.GetOrAdd(b)
					v.N, v.Name = int64(next), "again"
				case 1:
					if v := s.Get(b); v != nil {
						v.N++
					}
				}
			}
		}
		var chain []written
		var epoch uint64
		for round := range 12 {
			want := values(s)
			full := len(chain) == 0
			c := s.Capture(full, epoch, epoch, testCodec)
			done, gate := make(chan written), make(chan struct{})
			go func() { <-gate; done <- writeCapture(t, c) }()
			churn(1000 + rng.IntN(3000))
			close(gate)
			churn(1000 + rng.IntN(3000))
			w := <-done
			if !full && c.Entries() > 2*base+100 {
				t.Errorf("seed %d, round %d: the delta wrote %d entries: want the base keys changed and the 50 churning keys at most", seed, round, c.Entries())
			}
			if round > 0 && rng.IntN(4) == 0 {
				continue // failed: the next delta builds on the one before
			}
			if full {
				chain = []written{w}
			} else {
				chain = append(chain, w)
			}
			epoch = c.Epoch
			if got := restore(t, chain); !maps.Equal(got, want) {
				t.Fatalf("seed %d, round %d: the restored state differs from the state at the barrier: %d keys, want %d", seed, round, len(got), len(want))
			}
		}
		if n := len(s.dirty); n > 4*1024 {
			t.Errorf("seed %d: the epoch lists %d changes", seed, n)
		}
		// With changes listed (a capture was taken), keys that come and
		// go cost no allocation either.
		for s.InFlight() != nil {
			<-s.InFlight()
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		churn(20_000)
		runtime.ReadMemStats(&after)
		if n := after.Mallocs - before.Mallocs; n > 1000 {
			t.Errorf("seed %d: 20000 keys added and deleted in an epoch took %d allocations, want few", seed, n)
		}
	}
}
