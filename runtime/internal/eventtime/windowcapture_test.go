package eventtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

// flatAcc is an accumulator without pointers, which WindowState captures
// copy on write: a digest of the records a window got, and of its
// firings (fire changes it too).
type flatAcc struct {
	n, sum, fires int64
	hash          uint64
	last          string
}

func (a *flatAcc) add(id int) {
	a.n++
	a.sum += int64(id)
	a.hash = a.hash*1_000_003 ^ uint64(id)
	a.last = strconv.Itoa(id)
}

func encFlatAcc(w *codec.Writer, a *flatAcc) {
	w.Varint(a.n)
	w.Varint(a.sum)
	w.Varint(a.fires)
	w.Uvarint(a.hash)
	w.String(a.last)
}

func decFlatAcc(r *codec.Reader) *flatAcc {
	return &flatAcc{n: r.Varint(), sum: r.Varint(), fires: r.Varint(), hash: r.Uvarint(), last: r.String()}
}

func TestCanCapture(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{int64(0), true}, {"", true}, {flatAcc{}, true}, {[3]struct{ a, b float64 }{}, true}, {[0]*int{}, true},
		{testAcc{}, false}, {new(int), false}, {[]int(nil), false}, {map[int]int(nil), false}, {struct{ x any }{}, false},
		{[2]struct{ f func() }{}, false}, {struct{ c chan int }{}, false},
	} {
		if got := pointerFree(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("pointerFree(%T) = %v, want %v", c.v, got, c.want)
		}
	}
	if !NewWindowState[int, flatAcc](WindowAssigner{Kind: Sliding, Size: 10, Slide: 5}, 0, nil).CanCapture() {
		t.Error("sliding windows of flat accumulators cannot be captured")
	}
	if NewWindowState[int, testAcc](WindowAssigner{Kind: Tumbling, Size: 10}, 0, nil).CanCapture() {
		t.Error("windows of accumulators with a slice can be captured")
	}
	if NewWindowState[int, flatAcc](WindowAssigner{Kind: Session, Gap: 10}, 0, func(dst, src *flatAcc) {}).CanCapture() {
		t.Error("sessions can be captured")
	}
	_, _, err := NewWindowState[int, testAcc](WindowAssigner{Kind: Tumbling, Size: 10}, 0, nil).Capture(Delta{Full: true})
	if err == nil {
		t.Error("Capture of windows of accumulators with a slice: no error")
	}
}

// captureTwins applies the same changes to two window states: at each
// barrier, live is captured and twin snapshotted at once, then both go on
// (records, firings with fire changing the accumulators, drops, new keys,
// windows of other subtasks restored into them, whose unsorted panes are
// sorted when they fire) before the capture is encoded, on this goroutine
// or on another one while the changes go on (go test -race sees a write to
// what the capture holds). The capture must encode what the twin wrote at
// the barrier, byte for byte. A span other than 0 is both states' highest
// window stamp (stamps.go).
func captureTwins(t *testing.T, name string, rng *rand.Rand, a WindowAssigner, lateness int64, span uint64) (captures int) {
	t.Helper()
	live := NewWindowState[int, flatAcc](a, lateness, nil)
	twin := NewWindowState[int, flatAcc](a, lateness, nil)
	live.testSpan, twin.testSpan = span, span
	ops := genStream(rng, 200+rng.IntN(400))
	for i := range ops {
		if ops[i].kind == opAdd && rng.IntN(3) == 0 {
			ops[i].key = 5 + rng.IntN(30) // more keys, some new
		}
	}
	// The live state takes half of the records of tumbling windows by
	// Acc and Added, as generated code does, the twin all by Add: Acc's
	// fast path must stamp what it changes for the deltas, and leave a
	// captured pane's arrays alone, as Add does.
	apply := func(s *WindowState[int, flatAcc], o testOp) {
		if o.kind == opAdd && a.Kind == Tumbling && o.id%2 == 1 && s == live {
			if acc := s.Acc(o.key, o.ts, o.iwm); acc != nil {
				acc.add(o.id)
				s.Added(func(_ int, _ Window, acc *flatAcc) { acc.fires += 100 })
			}
			return
		}
		if o.kind == opAdd {
			s.Add(o.key, o.ts, o.iwm, func(acc *flatAcc) { acc.add(o.id) }, func(_ int, _ Window, acc *flatAcc) { acc.fires += 100 })
			return
		}
		s.Advance(o.ts, func(_ int, _ Window, acc *flatAcc) { acc.fires++ })
	}
	// other makes the full snapshot of a state of other keys (another
	// subtask's, with its own watermark) to restore into both.
	other := func() *state.Sections {
		o := NewWindowState[int, flatAcc](a, lateness, nil)
		for _, op := range genStream(rng, 20+rng.IntN(60)) {
			if op.kind == opAdd {
				op.key += 1000 + rng.IntN(3)
			}
			apply(o, op)
		}
		sec := state.NewSections(0, testMaxParallelism)
		if err := o.Snapshot(sec, testKeyGroup, encTestKey, encFlatAcc); err != nil {
			t.Fatal(err)
		}
		return sec
	}
	restore := func(s *WindowState[int, flatAcc], sec *state.Sections) {
		for i := range sec.W {
			if err := s.RestoreSection(sec.W[i].Bytes(), false, decTestKey, decFlatAcc); err != nil {
				t.Fatalf("%s: restore: %v", name, err)
			}
		}
		if err := s.EndChain(); err != nil {
			t.Fatalf("%s: restore: %v", name, err)
		}
	}
	var since uint64
	var pending []func() // encodes still to check, oldest first
	check := func() {
		for _, f := range pending {
			f()
		}
		pending = nil
	}
	for i, o := range ops {
		apply(live, o)
		apply(twin, o)
		if rng.IntN(25) == 0 {
			sec := other()
			restore(live, sec)
			restore(twin, sec)
		}
		if rng.IntN(12) != 0 {
			continue
		}
		if rng.IntN(3) != 0 {
			check() // else the captures overlap
		}
		d := Delta{Full: since == 0 || rng.IntN(4) == 0, Since: since}
		c, e1, err := live.Capture(d)
		if err != nil {
			t.Fatal(err)
		}
		want := state.NewSections(0, testMaxParallelism)
		e2, err := twin.SnapshotDelta(want, testKeyGroup, encTestKey, encFlatAcc, d)
		if err != nil {
			t.Fatal(err)
		}
		if e1 != e2 {
			t.Fatalf("%s: op %d: the capture ended epoch %d, the snapshot %d", name, i, e1, e2)
		}
		since = e1
		captures++
		got := state.NewSections(0, testMaxParallelism)
		var done chan error
		if rng.IntN(2) == 0 {
			done = make(chan error, 1)
			go func() { done <- c.Encode(got, testKeyGroup, encTestKey, encFlatAcc) }()
		}
		at := i
		pending = append(pending, func() {
			var err error
			if done != nil {
				err = <-done
			} else {
				err = c.Encode(got, testKeyGroup, encTestKey, encFlatAcc)
			}
			if err != nil {
				t.Fatalf("%s: encode: %v", name, err)
			}
			for j := range want.W {
				if g, w := got.W[j].Bytes(), want.W[j].Bytes(); !bytes.Equal(g, w) {
					t.Fatalf("%s: capture at op %d (%+v), key group %d: encoded after the changes\n%x\nat the barrier\n%x", name, at, d, j, g, w)
				}
			}
		})
	}
	check()
	return captures
}

func TestWindowCaptureCopiesOnWrite(t *testing.T) {
	t.Parallel()
	for _, kind := range []WindowKind{Tumbling, Sliding} {
		captures := 0
		for seed := range seeds(200) {
			rng := rand.New(rand.NewPCG(seed, 41+uint64(kind)))
			a := randomAssigner(rng, kind)
			lateness := randomLateness(rng)
			captures += captureTwins(t, fmt.Sprintf("%v size=%d slide=%d lateness=%d seed %d", kind, a.Size, a.Slide, lateness, seed), rng, a, lateness, 0)
		}
		if captures == 0 {
			t.Errorf("%v: nothing captured", kind)
		}
	}
}

// TestWindowCaptureEarlyFirings restores, while a capture is being
// encoded, windows that fired elsewhere into a captured pane that has not
// fired: the pane's record of them (pane.early) must not change under
// the capture (go test -race).
func TestWindowCaptureEarlyFirings(t *testing.T) {
	a := WindowAssigner{Kind: Tumbling, Size: 10}
	fired := func(k int) *state.Sections {
		o := NewWindowState[int, flatAcc](a, 100, nil)
		o.Add(k, 5, MinTime, func(acc *flatAcc) { acc.add(k) }, nil)
		o.Advance(20, func(int, Window, *flatAcc) {})
		sec := state.NewSections(0, testMaxParallelism)
		if err := o.Snapshot(sec, testKeyGroup, encTestKey, encFlatAcc); err != nil {
			t.Fatal(err)
		}
		return sec
	}
	restore := func(s *WindowState[int, flatAcc], sec *state.Sections) {
		for i := range sec.W {
			if err := s.RestoreSection(sec.W[i].Bytes(), false, decTestKey, decFlatAcc); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EndChain(); err != nil {
			t.Fatal(err)
		}
	}
	live := NewWindowState[int, flatAcc](a, 100, nil)
	twin := NewWindowState[int, flatAcc](a, 100, nil)
	for _, s := range []*WindowState[int, flatAcc]{live, twin} {
		s.Add(1, 5, MinTime, func(acc *flatAcc) { acc.add(1) }, nil)
		restore(s, fired(2)) // key 2 fired early in the pane of key 1
	}
	c, _, err := live.Capture(Delta{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	want := state.NewSections(0, testMaxParallelism)
	if _, err := twin.SnapshotDelta(want, testKeyGroup, encTestKey, encFlatAcc, Delta{Full: true}); err != nil {
		t.Fatal(err)
	}
	got := state.NewSections(0, testMaxParallelism)
	done := make(chan error)
	go func() { done <- c.Encode(got, testKeyGroup, encTestKey, encFlatAcc) }()
	for k := 3; k < 40; k++ {
		restore(live, fired(k))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for j := range want.W {
		if !bytes.Equal(got.W[j].Bytes(), want.W[j].Bytes()) {
			t.Fatalf("key group %d: encoded after the restores\n%x\nat the barrier\n%x", j, got.W[j].Bytes(), want.W[j].Bytes())
		}
	}
}

// BenchmarkWindowStateCapture takes BenchmarkWindowStateSnapshot's state
// (1.5M sliding windows of 300k keys) apart: capture is what the
// operator does at the barrier instead of encoding (Capture, full);
// capture+touch adds one record to each of the five panes after it,
// which copies the pane's accumulators and stamps (the rest of what a
// checkpoint costs the operator); encode is the writer's work.
func BenchmarkWindowStateCapture(b *testing.B) {
	const keys = 300_000
	s := NewWindowState[int, int64](WindowAssigner{Kind: Sliding, Size: 10_000, Slide: 2000}, 0, nil)
	add := func(acc *int64) { *acc++ }
	ts := int64(1_436_918_400_000)
	for k := range keys {
		s.Add(k, ts+int64(k%500), MinTime, add, nil)
	}
	encAcc := func(w *codec.Writer, a *int64) { w.Varint(*a) }
	keyGroupsOf := func(groups int) func(int) int {
		return func(k int) int { return keygroup.Of(keygroup.HashInt64(int64(k)), groups) }
	}
	perWindow := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(5*keys), "ns/window")
	}
	b.Run("capture", func(b *testing.B) {
		for range b.N {
			if _, _, err := s.Capture(Delta{Full: true}); err != nil {
				b.Fatal(err)
			}
		}
		perWindow(b)
	})
	b.Run("capture+touch", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, _, err := s.Capture(Delta{Full: true}); err != nil {
				b.Fatal(err)
			}
			s.Add(0, ts, MinTime, add, nil) // key 0 is in all five panes
		}
		perWindow(b)
	})
	b.Run("encode", func(b *testing.B) {
		c, _, err := s.Capture(Delta{Full: true})
		if err != nil {
			b.Fatal(err)
		}
		keyGroup := keyGroupsOf(128)
		b.ReportAllocs()
		for range b.N {
			if err := c.Encode(state.NewSections(0, 128), keyGroup, encTestKey, encAcc); err != nil {
				b.Fatal(err)
			}
		}
		perWindow(b)
	})
	// The same into sections that already have room (as the writer's,
	// sized from the last delta), with the keys in 1, 16 and 128 key
	// groups: what spreading the windows over the sections costs. It was
	// about a quarter of the time a window at 128 (2026-12-05: 27 ns
	// against 24 in 16 groups and 20 in one, where the creation numbers
	// of a section's windows are also closer, so their heads shorter); a
	// staging buffer per section, all of them in a few pages, did not
	// lower it (nexmark README).
	for _, groups := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("encode-reused/keygroups=%d", groups), func(b *testing.B) {
			c, _, err := s.Capture(Delta{Full: true})
			if err != nil {
				b.Fatal(err)
			}
			keyGroup := keyGroupsOf(groups)
			sec := state.NewSections(0, groups)
			if err := c.Encode(sec, keyGroup, encTestKey, encAcc); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for j := range sec.W {
					sec.W[j].Reset()
				}
				if err := c.Encode(sec, keyGroup, encTestKey, encAcc); err != nil {
					b.Fatal(err)
				}
			}
			perWindow(b)
		})
	}
}

// TestCaptureEncodePresizes checks that a capture's Encode sizes the
// sections as it goes: into sections without a size hint (a state's
// first full file, and its first delta) it allocates about the file's
// size, not the 2-4 times that buffers doubled from nothing would,
// whether the keys' bytes grow through the file (ids in the order their
// windows were made) or not, and when a few keys fill a few of the key
// groups' sections.
func TestCaptureEncodePresizes(t *testing.T) {
	const records = 100_000
	const groups = 128
	keyGroup := func(k int) int { return keygroup.Of(keygroup.HashInt64(int64(k)), groups) }
	ts := int64(1_436_918_400_000)
	sliding := WindowAssigner{Kind: Sliding, Size: 10_000, Slide: 2000}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		assign WindowAssigner
		key    func(i int) int
		time   func(i int) int64
	}{
		{"growing ids", sliding, func(i int) int { return i }, func(i int) int64 { return ts + int64(i%500) }},
		{"random", sliding, func(int) int { return int(rng.Int64()) }, func(i int) int64 { return ts + int64(i%500) }},
		// Six keys, a window of each every second: six of the 128
		// sections get windows.
		{"few keys", WindowAssigner{Kind: Tumbling, Size: 1000}, func(i int) int { return i % 6 }, func(i int) int64 { return ts + int64(i/6)*1000 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewWindowState[int, int64](tc.assign, 0, nil)
			add := func(acc *int64) { *acc++ }
			ks := make([]int, records)
			for i := range ks {
				ks[i] = tc.key(i)
				s.Add(ks[i], tc.time(i), MinTime, add, nil)
			}
			encAcc := func(w *codec.Writer, a *int64) { w.Varint(*a) }
			encode := func(what string, d Delta) uint64 {
				c, epoch, err := s.Capture(d)
				if err != nil {
					t.Fatal(err)
				}
				sec := state.NewSections(0, groups)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				if err := c.Encode(sec, keyGroup, encTestKey, encAcc); err != nil {
					t.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				size, room := 0, 0
				for i := range sec.W {
					size += sec.W[i].Len()
					room += sec.W[i].Room()
				}
				allocated := after.TotalAlloc - before.TotalAlloc
				t.Logf("%s: %d bytes, allocated %.2f times that, room left %.2f", what, size, float64(allocated)/float64(size), float64(room)/float64(size))
				if size < 2*records {
					t.Fatalf("%s: %d bytes, want at least 2 a record", what, size)
				}
				// A later estimate may grow a section once more: the
				// creation numbers' varints grow through the file.
				if float64(allocated) > 1.6*float64(size) {
					t.Errorf("%s: encoding %d bytes allocated %d bytes, want at most 1.6 times the bytes", what, size, allocated)
				}
				if room > size/3 {
					t.Errorf("%s: the sections have %d bytes of room left over %d written, want at most a third", what, room, size)
				}
				return epoch
			}
			epoch := encode("full", Delta{Full: true})
			// Every other record comes again: about half the windows
			// are in the delta.
			for i := 0; i < records; i += 2 {
				s.Add(ks[i], tc.time(i), MinTime, add, nil)
			}
			encode("delta", Delta{Since: epoch})
		})
	}
}

// TestCaptureReleaseReuses checks that a released capture's copies are
// what the next capture copies into, and that a capture encoded while
// the state goes on changing still writes the windows as they were at
// its barrier when its arrays were an earlier capture's.
func TestCaptureReleaseReuses(t *testing.T) {
	const keys = 2000
	s := NewWindowState[int, int64](WindowAssigner{Kind: Sliding, Size: 10_000, Slide: 2000}, 0, nil)
	add := func(acc *int64) { *acc++ }
	ts := int64(1_436_918_400_000)
	feed := func() {
		for k := range keys {
			s.Add(k, ts+int64(k%500), MinTime, add, nil)
		}
	}
	encAcc := func(w *codec.Writer, a *int64) { w.Varint(*a) }
	encode := func(encode func(*state.Sections) error) [][]byte {
		sec := state.NewSections(0, testMaxParallelism)
		if err := encode(sec); err != nil {
			t.Fatal(err)
		}
		out := make([][]byte, len(sec.W))
		for i := range sec.W {
			out[i] = bytes.Clone(sec.W[i].Bytes())
		}
		return out
	}
	// The first element of each array a capture copied.
	copies := func(c *WindowCapture[int, int64]) map[*int64]bool {
		m := map[*int64]bool{}
		for _, p := range c.panes {
			if p.copied && len(p.accs) > 0 {
				m[&p.accs[0]] = true
			}
		}
		return m
	}
	var released map[*int64]bool
	for round := range 4 {
		feed()
		want := encode(func(sec *state.Sections) error { return s.Snapshot(sec, testKeyGroup, encTestKey, encAcc) })
		c, _, err := s.Capture(Delta{Full: true})
		if err != nil {
			t.Fatal(err)
		}
		got := copies(c)
		if len(got) == 0 {
			t.Fatalf("round %d: the capture copied no pane", round)
		}
		for p := range got {
			if round > 0 && !released[p] {
				t.Errorf("round %d: the capture copied into an array of its own, not one released", round)
			}
		}
		feed() // the state changes before the capture is encoded
		if enc := encode(func(sec *state.Sections) error { return c.Encode(sec, testKeyGroup, encTestKey, encAcc) }); !reflect.DeepEqual(enc, want) {
			t.Fatalf("round %d: the capture encoded after the state changed differs from the state at its barrier", round)
		}
		c.Release()
		released = got
	}
}

// TestSpareArraysBounded: a state keeps at most maxSpares arrays of a
// kind, dropping the smallest, and a capture takes the smallest that has
// the room it needs.
func TestSpareArraysBounded(t *testing.T) {
	var a spareArrays[int64]
	for n := 1; n <= maxSpares+4; n++ {
		a.put(make([]int64, n, 10*n))
	}
	if len(a) != maxSpares {
		t.Fatalf("%d spare arrays kept, want %d", len(a), maxSpares)
	}
	for _, x := range a {
		if cap(x) < 50 || len(x) != 0 {
			t.Errorf("a spare of capacity %d and length %d is kept: the smallest go first, and spares are empty", cap(x), len(x))
		}
	}
	if x := a.take(95); cap(x) != 100 || len(x) != 0 {
		t.Errorf("take(95) gave an array of capacity %d and length %d, want the smallest with the room (100), empty", cap(x), len(x))
	}
	if len(a) != maxSpares-1 {
		t.Errorf("%d spare arrays after a take, want %d", len(a), maxSpares-1)
	}
	if x := a.take(1000); x != nil {
		t.Errorf("take(1000) gave an array of capacity %d, want none: no spare has the room", cap(x))
	}
}
