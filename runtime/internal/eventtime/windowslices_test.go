package eventtime

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

// setAcc is an accumulator whose merge is its add: the records' count,
// sum and xor of a mix of their ids, the same whatever their order.
type setAcc struct{ n, sum, x int64 }

func (a *setAcc) add(id int) {
	a.n++
	a.sum += int64(id)
	a.x ^= int64(uint64(id) * 0x9e3779b97f4a7c15 >> 1)
}

func mergeSetAcc(dst, src *setAcc) { dst.n, dst.sum, dst.x = dst.n+src.n, dst.sum+src.sum, dst.x^src.x }

func encSetAcc(w *codec.Writer, a *setAcc) { w.Varint(a.n); w.Varint(a.sum); w.Varint(a.x) }

func decSetAcc(r *codec.Reader) *setAcc {
	return &setAcc{n: r.Varint(), sum: r.Varint(), x: r.Varint()}
}

// sliceTwin is a subtask's windows both ways: in slices, and per window
// (the reference).
type sliceTwin struct {
	sl, ref *WindowState[int, setAcc]
	wm      int64 // the subtask's input watermark
}

func newSliceTwin(a WindowAssigner) *sliceTwin {
	return &sliceTwin{sl: NewSlicedWindows[int](a, mergeSetAcc), ref: NewWindowState[int, setAcc](a, 0, nil), wm: MinTime}
}

// fired collects what a state fires, a line per window.
func fired(out *[]string) func(k int, w Window, acc *setAcc) {
	return func(k int, w Window, acc *setAcc) { *out = append(*out, fmt.Sprintf("%v key=%d %v", w, k, *acc)) }
}

// add adds record id to both and checks they take it alike.
func (tw *sliceTwin) add(t *testing.T, k int, ts int64, id int) {
	t.Helper()
	f := func(a *setAcc) { a.add(id) }
	if a, b := tw.sl.Add(k, ts, tw.wm, f, nil), tw.ref.Add(k, ts, tw.wm, f, nil); a != b {
		t.Fatalf("record %d (key %d at %d, watermark %d): taken %v in slices, %v per window", id, k, ts, tw.wm, a, b)
	}
}

// advance moves both to wm and returns what each fired.
func (tw *sliceTwin) advance(wm int64) (sl, ref []string) {
	tw.wm = max(tw.wm, wm)
	tw.sl.Advance(wm, fired(&sl))
	tw.ref.Advance(wm, fired(&ref))
	return sl, ref
}

// sortedPerWindow sorts the lines of each window: after a change of
// parallelism the keys of different subtasks fire in an order of their
// creation numbers, which the two ways number apart.
func sortedPerWindow(lines []string) []string {
	out := slices.Clone(lines)
	slices.SortStableFunc(out, func(a, b string) int {
		return strings.Compare(a[:strings.Index(a, " key=")], b[:strings.Index(b, " key=")])
	})
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j][:strings.Index(out[j], " key=")] == out[i][:strings.Index(out[i], " key=")] {
			j++
		}
		slices.Sort(out[i:j])
		i = j
	}
	return out
}

// snapshotTwin writes one subtask's windows both ways into the sections
// of its key groups: the slices as a checkpoint (full or, on top of a
// full one taken before, a delta) or a savepoint (canonical), the
// reference in full. It returns the sections per key group, a chain of
// files for the slices.
func snapshotTwin(t *testing.T, tw *sliceTwin, sub, parallelism int, d Delta) (sl [][][]byte, ref [][]byte) {
	t.Helper()
	start, end := keygroup.Range(sub, testMaxParallelism, parallelism)
	secS, secR := state.NewSections(start, end), state.NewSections(start, end)
	c, _, err := tw.sl.Capture(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Encode(secS, testKeyGroup, encTestKey, encSetAcc); err != nil {
		t.Fatal(err)
	}
	if err := tw.ref.Snapshot(secR, testKeyGroup, encTestKey, encSetAcc); err != nil {
		t.Fatal(err)
	}
	for i := range secS.W {
		sl = append(sl, [][]byte{secS.W[i].Bytes()})
		ref = append(ref, secR.W[i].Bytes())
	}
	return sl, ref
}

// TestSlicedAsPerWindow runs random records and watermarks through
// windows kept in slices and per window, in two subtasks at different
// watermarks, restores both from checkpoints (a full file and a delta),
// from savepoints, and both subtasks into one (a change of parallelism),
// which it checkpoints and restores again, at once or after more records
// and watermarks (while the marks of how far the keys' windows fired are
// kept), and checks that the two ways fire the same windows with the
// same results, in the same order within a subtask.
func TestSlicedAsPerWindow(t *testing.T) {
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 11))
		slide := int64(1 + rng.IntN(4))
		a := WindowAssigner{Kind: Sliding, Slide: slide, Size: slide * int64(2+rng.IntN(4))}
		twins := []*sliceTwin{newSliceTwin(a), newSliceTwin(a)}
		if !twins[0].sl.sliced {
			t.Fatalf("%+v: not kept in slices", a)
		}
		id := 0
		keys := 1 + rng.IntN(12)
		now := int64(rng.IntN(20))
		// run feeds n random records and watermarks to the twins, the
		// key's subtask taking each record.
		phase := "before any restore"
		run := func(n int, exact bool) {
			for range n {
				sub := rng.IntN(len(twins))
				tw := twins[sub]
				switch rng.IntN(8) {
				case 0:
					// The input's watermark moves ahead of the state's
					// (a sender ahead of others), near the records'
					// times, behind some of them.
					tw.wm = max(tw.wm, now-int64(rng.IntN(int(a.Size+2*slide))))
					continue
				case 1:
					wm := tw.wm
					if rng.IntN(2) == 0 {
						wm = max(tw.wm, now-int64(rng.IntN(int(a.Size+2*slide))))
					}
					s, r := tw.advance(wm)
					if exact && !slices.Equal(s, r) || !slices.Equal(sortedPerWindow(s), sortedPerWindow(r)) {
						t.Fatalf("seed %d, %+v, %s, subtask %d, watermark %d: fired in slices\n%s\nper window\n%s", seed, a, phase, sub, wm, strings.Join(s, "\n"), strings.Join(r, "\n"))
					}
					continue
				}
				k := rng.IntN(keys)
				if p := len(twins); p > 1 {
					k = k*p + sub // keys of this subtask: see ownKey
					for keygroup.Owner(testKeyGroup(k), testMaxParallelism, p) != sub {
						k += p
					}
				}
				now += int64(rng.IntN(3))
				id++
				tw.add(t, k, now-int64(rng.IntN(int(a.Size+slide))), id)
			}
		}
		run(60, true)
		// Checkpoints of each subtask: a full file, more records, a delta
		// (or a savepoint), restored at the same parallelism.
		var base [][][][]byte
		for sub, tw := range twins {
			sl, _ := snapshotTwin(t, tw, sub, 2, Delta{Full: true})
			base = append(base, sl)
		}
		run(40, true)
		canonical := rng.IntN(3) == 0
		for sub, tw := range twins {
			since := tw.sl.Epoch() - 1
			d := Delta{Since: since, Keep: since}
			if canonical {
				d = Delta{Full: true, Canonical: true}
			}
			sl, ref := snapshotTwin(t, tw, sub, 2, d)
			n := newSliceTwin(a)
			n.wm = tw.wm
			for i := range sl {
				if !canonical {
					if err := n.sl.RestoreSection(base[sub][i][0], false, decTestKey, decSetAcc); err != nil {
						t.Fatalf("seed %d: restore full: %v", seed, err)
					}
				}
				if err := n.sl.RestoreSection(sl[i][0], !canonical, decTestKey, decSetAcc); err != nil {
					t.Fatalf("seed %d: restore delta: %v", seed, err)
				}
				if err := n.ref.Restore(ref[i], decTestKey, decSetAcc); err != nil {
					t.Fatal(err)
				}
			}
			if err := n.sl.EndChain(); err != nil {
				t.Fatal(err)
			}
			twins[sub] = n
		}
		phase = fmt.Sprintf("after a restore (savepoint %v)", canonical)
		run(60, true)
		// Both subtasks into one, at the lower of their watermarks: a
		// record may come for a window that its key's subtask fired
		// before, which fires again with the records since.
		one := newSliceTwin(a)
		one.wm = min(twins[0].wm, twins[1].wm)
		for sub, tw := range twins {
			sl, ref := snapshotTwin(t, tw, sub, 2, Delta{Full: true})
			for i := range sl {
				if err := one.sl.RestoreSection(sl[i][0], false, decTestKey, decSetAcc); err != nil {
					t.Fatal(err)
				}
				if err := one.ref.Restore(ref[i], decTestKey, decSetAcc); err != nil {
					t.Fatal(err)
				}
			}
			if err := one.sl.EndChain(); err != nil {
				t.Fatal(err)
			}
		}
		// reopen takes a checkpoint of the one subtask and restores it.
		reopen := func() {
			sl, ref := snapshotTwin(t, one, 0, 1, Delta{Full: true})
			again := newSliceTwin(a)
			again.wm = one.wm
			for i := range sl {
				if err := again.sl.RestoreSection(sl[i][0], false, decTestKey, decSetAcc); err != nil {
					t.Fatal(err)
				}
				if err := again.ref.Restore(ref[i], decTestKey, decSetAcc); err != nil {
					t.Fatal(err)
				}
			}
			if err := again.sl.EndChain(); err != nil {
				t.Fatal(err)
			}
			one = again
			twins = []*sliceTwin{one}
		}
		if rng.IntN(2) == 0 {
			// A checkpoint at once, before the watermark passes the
			// subtask ahead: it keeps how far its keys' windows fired.
			reopen()
		}
		twins = []*sliceTwin{one}
		phase = "after both subtasks were restored into one"
		run(30, false)
		if rng.IntN(2) == 0 {
			// A checkpoint once records and watermarks came, when the
			// marks of how far the keys' windows fired that the
			// watermark has not passed are still kept.
			reopen()
			phase = "after both subtasks were restored into one, and again"
		}
		run(30, false)
		s, r := one.advance(MaxTime)
		if !slices.Equal(sortedPerWindow(s), sortedPerWindow(r)) {
			t.Fatalf("seed %d, %+v: at the end, fired in slices\n%s\nper window\n%s", seed, a, strings.Join(s, "\n"), strings.Join(r, "\n"))
		}
		if one.sl.Len() != 0 || one.ref.Len() != 0 {
			t.Fatalf("seed %d: %d slices and %d windows left at the end", seed, one.sl.Len(), one.ref.Len())
		}
	}
}

// TestSlicesRefusedPerWindow: a state that keeps its windows per window,
// and ReadWindows (the pebble backend's restore), refuse a checkpoint of
// slices, asking for a savepoint; a savepoint of the slices holds the
// windows whole, which both read.
func TestSlicesRefusedPerWindow(t *testing.T) {
	a := WindowAssigner{Kind: Sliding, Size: 10, Slide: 2}
	s := NewSlicedWindows[int](a, mergeSetAcc)
	s.Add(1, 5, MinTime, func(acc *setAcc) { acc.add(1) }, nil)
	for _, canonical := range []bool{false, true} {
		sec := state.NewSections(0, testMaxParallelism)
		c, _, err := s.Capture(Delta{Full: true, Canonical: canonical})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Encode(sec, testKeyGroup, encTestKey, encSetAcc); err != nil {
			t.Fatal(err)
		}
		b := sec.W[testKeyGroup(1)].Bytes()
		per := NewWindowState[int, setAcc](a, 0, nil)
		err = per.Restore(b, decTestKey, decSetAcc)
		windows := 0
		_, _, _, rerr := ReadWindows(b, decTestKey, decSetAcc, func(int, Window, uint64, bool, *setAcc) error { windows++; return nil })
		if canonical {
			if err != nil || rerr != nil || per.Len() != 5 || windows != 5 {
				t.Errorf("savepoint: restored %d windows (%v), read %d (%v); want the five windows of the record", per.Len(), err, windows, rerr)
			}
			continue
		}
		for _, err := range []error{err, rerr} {
			if !errors.Is(err, codec.ErrCorrupt) || !strings.Contains(err.Error(), "resume from a savepoint") {
				t.Errorf("a checkpoint of slices read per window: %v", err)
			}
		}
	}
}

// BenchmarkSlicedAdd is Nexmark q5's counts: sliding windows of 10 s
// every 2 s kept in slices, 4M records a slice, each on one of the latest
// 100 keys (Nexmark's bids are for auctions still open), a new key every
// 16 records, so that a slice holds 250K keys. untracked: no checkpoint
// ever; tracked: a delta captured every 1M records (at 1-2M records a
// second, a checkpoint every second), which stamps the first change of
// each window in an epoch. The captures are not encoded. An op is a
// record.
func BenchmarkSlicedAdd(b *testing.B) {
	const perSlice, epoch = 4_000_000, 1_000_000
	rng := rand.New(rand.NewPCG(1, 1))
	ks := make([]int64, 1<<20)
	for i := range ks {
		ks[i] = rng.Int64N(100)
	}
	for _, tracked := range []bool{false, true} {
		name := "untracked"
		if tracked {
			name = "tracked"
		}
		b.Run(name, func(b *testing.B) {
			s := NewSlicedWindows[int64, int64](WindowAssigner{Kind: Sliding, Size: 10_000, Slide: 2000}, func(dst, src *int64) { *dst += *src })
			add := func(acc *int64) { *acc++ }
			var fired int64
			fire := func(_ int64, _ Window, acc *int64) { fired += *acc }
			var since uint64
			for i := int64(0); b.Loop(); i++ {
				k := max(i/16-ks[i&(1<<20-1)], 0)
				s.Add(k, i*2000/perSlice, MinTime, add, nil)
				if i%epoch == epoch-1 {
					s.Advance(i*2000/perSlice-1, fire)
					if tracked {
						_, e, err := s.Capture(Delta{Full: since == 0, Since: since})
						if err != nil {
							b.Fatal(err)
						}
						since = e
					}
				}
			}
		})
	}
}
