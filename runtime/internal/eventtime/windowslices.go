package eventtime

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/invariants"
)

// Sliding windows kept in slices.
//
// A sliding window of Size every Slide puts each record into Size/Slide
// windows: Nexmark q5's (10 s every 2 s) changed five accumulators per
// bid, and its checkpoints wrote each of them. When the windows have a
// merge function, no allowed lateness and a size that is a multiple of
// the slide, WindowState keeps them in slices instead, as Flink's SQL
// window aggregations do: a record goes into the one slice of Slide it
// falls in (a pane of width Slide, found as a tumbling window's), and a
// window fires by merging, key by key, the slices it spans, in ascending
// start. A slice is dropped when the last window it is part of fires.
//
// The results are the same as per window, in the same order: windows
// fire in ascending end, and a window's keys in the order of their
// creation, the smallest creation number of the key's slices in it (the
// first record of the key in the window). The accumulators differ only
// where merge is not add: a window's accumulator is the merge of its
// slices', not its records added in arrival order.
//
// A record that is late for some of its slice's windows but not for
// others (its input's watermark is ahead of the state's: a sender ahead
// of the others) cannot go into the slice: it goes, as per window, into
// each window it is not late for, kept whole (slicing.whole), and a
// window's whole accumulator is merged with its slices' at its firing.
//
// Checkpoints hold the slices and the whole windows (layoutSlices), so
// that a delta writes the slices that changed, one per record's key, not
// five windows. Savepoints hold the windows whole (layoutPanes,
// Delta.Canonical), as the pebble backend and `savepoint inspect` read
// them; windows restored whole stay whole until they fire: a window
// cannot be split back into slices. A program that keeps the windows per
// window (allowed lateness, a trigger, no merge, or the pebble backend)
// refuses a checkpoint of slices, asking for a savepoint.
//
// After a change of parallelism the subtasks restored together may have
// been at different watermarks: the windows of a subtask that was ahead
// fired there, but the restored state's watermark is the lowest.
// firedThrough keeps, for the keys of such subtasks, the watermark their
// windows had fired through, until the state's watermark passes it: their
// slices do not count in those windows, and a record that comes for one
// of them goes into it whole, which fires it again with the records
// since, as per window.
type slicing[K comparable, A any] struct {
	// whole holds the windows kept whole, by start.
	whole map[int64]*pane[K, A]
	// firedThrough: see above; nil but after such a restore. firedMax
	// is the largest of its values, past which it is dropped.
	firedThrough map[K]int64
	firedMax     int64
	// firstWM is the watermark of the first chain of files restored
	// (EndChain), once firstSet.
	firstWM  int64
	firstSet bool
	// unsettled is set by a restore: the slices' firing times and
	// firedThrough are settled at the next Advance, once the restored
	// watermark is known.
	unsettled bool
	// sectionFired is the header's fired (field 6) of the section being
	// restored: its keys' windows fired through it.
	sectionFired int64
	// Scratch of fireWindow.
	acc    A
	firing []*pane[K, A]
	cur    []int
}

// NewSlicedWindows returns an empty window state for sliding windows of a
// with merge: kept in slices when the windows allow it (a size that is a
// multiple of the slide, keys and accumulators without pointers), else
// per window as NewWindowState keeps them, with no allowed lateness in
// either case. It panics on an invalid assigner or one that is not
// sliding: the compiler checks them.
func NewSlicedWindows[K comparable, A any](a WindowAssigner, merge func(dst, src *A)) *WindowState[K, A] {
	if a.Kind != Sliding || merge == nil {
		panic("sliced windows are sliding windows with a merge function")
	}
	s := NewWindowState[K](a, 0, merge)
	s.slice()
	return s
}

// slice makes s, empty, keep its windows in slices if they allow it.
func (s *WindowState[K, A]) slice() {
	a := s.assign
	if a.Kind != Sliding || s.merge == nil || s.lateness != 0 || a.Size <= a.Slide || a.Size%a.Slide != 0 ||
		a.Size >= slidingSafe || !s.capturable {
		return
	}
	s.sliced = true
	s.ix, s.ring = paneIndex[K]{}, nil
	s.sl = slicing[K, A]{whole: map[int64]*pane[K, A]{}}
}

// allPanes yields the panes: the slices and the windows kept whole.
func (s *WindowState[K, A]) allPanes() iter.Seq[*pane[K, A]] {
	return func(yield func(*pane[K, A]) bool) {
		for _, p := range s.panes {
			if !yield(p) {
				return
			}
		}
		for _, p := range s.sl.whole {
			if !yield(p) {
				return
			}
		}
	}
}

// addSliced is Add for windows kept in slices. A record goes into its
// slice, which every window after the watermark that spans the slice
// counts, unless one of those windows is late for the record: its input's
// watermark is ahead of the state's (a sender ahead of the others), or,
// after a change of parallelism, the windows of its key fired before the
// checkpoint (firedThrough). Then the record goes, as per window, into
// each window it is not late for, kept whole. It returns false when every
// window of the slice is late for the record.
func (s *WindowState[K, A]) addSliced(k K, ts, inputWatermark int64, add func(acc *A)) bool {
	wm := max(inputWatermark, s.wm)
	p := s.last
	if p == nil || ts < p.w.Start || ts >= p.w.End {
		if ts <= -slidingSafe || ts >= slidingSafe {
			// Far from any window a pipeline's times have: out of
			// the bounds that the slices' sums are kept within.
			return false
		}
		start := floorMultiple(ts, s.assign.Slide)
		w := Window{start, start + s.assign.Slide}
		if s.cleanup(w) <= wm {
			return false
		}
		if s.sl.firedThrough == nil && !aheadOf(inputWatermark, s.wm, w) {
			p = s.pane(w, 0)
		} else {
			return s.addSlicedLate(k, w, inputWatermark, add)
		}
	} else if s.lastDrop <= wm {
		return false
	} else if s.sl.firedThrough != nil || aheadOf(inputWatermark, s.wm, p.w) {
		return s.addSlicedLate(k, p.w, inputWatermark, add)
	}
	i := s.entryIn(p, k, false, 0, 0)
	add(&p.accs[i])
	return true
}

// aheadOf reports whether a sender's watermark inputWatermark, ahead of
// the state's wm, may make a record of slice w late for some of its
// windows: it has reached the end of the first of them, which ends with
// the slice. Behind that, addSlicedLate would add the record to its
// slice alone, as addSliced does. At parallelism 2 one of two senders is
// nearly always ahead of the other, by far less than a slide: half of
// q5's bids took addSlicedLate's path before this was asked.
func aheadOf(inputWatermark, wm int64, w Window) bool {
	return inputWatermark > wm && inputWatermark >= w.End-1
}

// addSlicedLate is addSliced for a record whose input's watermark is
// ahead of the state's, or of a key whose windows fired before a restore:
// some of the windows of its slice w may be late for it.
func (s *WindowState[K, A]) addSlicedLate(k K, w Window, inputWatermark int64, add func(acc *A)) bool {
	wm := max(inputWatermark, s.wm)
	// The key's slices count in the windows after ft.
	ft := s.wm
	if f, ok := s.sl.firedThrough[k]; ok {
		ft = max(ft, f)
	}
	last := w.Start + s.assign.Size
	fromSlice := max(w.End, s.endAfter(ft))
	to := last + 1 // the windows before it take the record whole
	if fromSlice <= last && fromSlice-1 > wm {
		// No window that counts the slice is late for the record.
		p := s.pane(w, 0)
		i := s.entryIn(p, k, false, 0, 0)
		add(&p.accs[i])
		to = fromSlice
	}
	for end := max(w.End, s.endAfter(wm)); end < to; end += s.assign.Slide {
		p := s.wholePane(Window{end - s.assign.Size, end})
		i := s.entryIn(p, k, false, 0, 0)
		add(&p.accs[i])
	}
	return true
}

// endAfter is the end of the first window that fires after watermark
// wm: the first multiple of the slide above wm+1.
func (s *WindowState[K, A]) endAfter(wm int64) int64 {
	switch {
	case wm < -slidingSafe:
		return MinTime
	case wm >= slidingSafe:
		return MaxTime
	}
	return floorMultiple(wm+1, s.assign.Slide) + s.assign.Slide
}

// wholePane returns the pane of window w kept whole, making it when new.
func (s *WindowState[K, A]) wholePane(w Window) *pane[K, A] {
	p := s.sl.whole[w.Start]
	if p == nil {
		p = &pane[K, A]{w: w, idx: newKeyIndex[K](s.intKeys, 0)}
		p.at = w.MaxTimestamp()
		s.sl.whole[w.Start] = p
		s.paneHeap.push(p)
		if s.tracking {
			p.vers = []uint8{}
		}
	}
	return p
}

// nextFiring is the time at which the next window that slice w is part
// of fires (its MaxTimestamp): the first after the watermark, from the
// one that ends with the slice on. It is past the slice's cleanup when
// every one has fired.
func (s *WindowState[K, A]) nextFiring(w Window) int64 {
	return max(w.End, s.endAfter(s.wm)) - 1
}

// advanceSliced fires the windows whose MaxTimestamp the watermark has
// reached, in ascending end, and drops the slices and whole windows that
// no window needs any more.
func (s *WindowState[K, A]) advanceSliced(fire func(k K, w Window, acc *A)) {
	size, slide := s.assign.Size, s.assign.Slide
	for len(s.paneHeap) > 0 && s.paneHeap[0].at <= s.wm {
		top := s.paneHeap[0]
		end := top.at + 1
		if fire != nil {
			s.fireWindow(end, func(k K, w Window, _ uint64, acc *A) { fire(k, w, acc) })
		}
		for start := end - size; start < end; start += slide {
			if p := s.panes[start]; p != nil && p.at == end-1 {
				if end-1 >= s.cleanup(p.w) {
					s.paneHeap.remove(p.hi)
					s.dropPane(p)
				} else {
					p.at += slide
					s.paneHeap.fix(p.hi)
				}
			}
		}
		if p := s.sl.whole[end-size]; p != nil && p.w.End == end {
			s.paneHeap.remove(p.hi)
			delete(s.sl.whole, p.w.Start)
			s.n -= len(p.keys)
		}
		if len(s.paneHeap) > 0 && s.paneHeap[0] == top && top.at == end-1 {
			panic(fmt.Sprintf("eventtime: pane %v due at %d is neither a slice nor a window of the window ending at %d", top.w, top.at, end))
		}
	}
	if s.sl.firedThrough != nil && s.wm >= s.sl.firedMax {
		s.sl.firedThrough = nil
	}
}

// fireWindow hands emit the result of every key of the window that ends
// at end, with the key's creation number in it: the merge of the key's
// window kept whole, if any, and its slices, in the order of the keys'
// creation. The accumulator is valid only during the call.
func (s *WindowState[K, A]) fireWindow(end int64, emit func(k K, w Window, seq uint64, acc *A)) {
	size, slide := s.assign.Size, s.assign.Slide
	win := Window{end - size, end}
	ps := s.sl.firing[:0]
	whole := s.sl.whole[win.Start]
	if whole != nil {
		ps = append(ps, whole) // first: its records are the oldest
	}
	for start := win.Start; start < end; start += slide {
		if p := s.panes[start]; p != nil {
			ps = append(ps, p)
		}
	}
	cur := s.sl.cur[:0]
	for _, p := range ps {
		s.sortPane(p)
		cur = append(cur, 0)
	}
	s.sl.firing, s.sl.cur = ps, cur
	var zero A
	for {
		// The key with the smallest creation number not yet visited:
		// the panes' keys are each in creation order.
		best, seq := -1, uint64(0)
		for j, p := range ps {
			if c := cur[j]; c < len(p.keys) {
				if q := p.seqs.at(c); best < 0 || q < seq {
					best, seq = j, q
				}
			}
		}
		if best < 0 {
			break
		}
		i := cur[best]
		cur[best]++
		k := ps[best].keys[i]
		if ft, ok := s.sl.firedThrough[k]; ok && end-1 <= ft {
			// The window fired for the key's slices before the restore,
			// in a subtask ahead; records since count whole.
			if ps[best] == whole {
				emit(k, win, seq, &whole.accs[i])
			}
			continue
		}
		acc := &s.sl.acc
		*acc = zero
		first := true
		for j, p := range ps {
			x := int32(i)
			if j != best {
				var ok bool
				if x, ok = p.idx.get(k); !ok {
					continue
				}
				if p.seqs.at(int(x)) < seq {
					first = false // visited already, at its first slice
					break
				}
			}
			s.merge(acc, &p.accs[x])
		}
		if first {
			emit(k, win, seq, acc)
		}
	}
	clear(ps)
}

// settle computes, once a restore is over, when each slice fires next
// from the restored watermark, drops those whose windows have all
// fired, and keeps in firedThrough only what the watermark has not
// passed.
func (s *WindowState[K, A]) settle() {
	s.sl.unsettled = false
	for _, p := range s.panes {
		p.at = s.nextFiring(p.w)
		if p.at > s.cleanup(p.w) {
			s.paneHeap.remove(p.hi)
			s.dropPane(p)
			continue
		}
		s.paneHeap.fix(p.hi)
	}
	s.sl.firedMax = MinTime
	for k, ft := range s.sl.firedThrough {
		if ft <= s.wm {
			delete(s.sl.firedThrough, k)
		}
		s.sl.firedMax = max(s.sl.firedMax, ft)
	}
	if len(s.sl.firedThrough) == 0 {
		s.sl.firedThrough = nil
	}
}

// layoutFits checks that a section of windows in the layout of header h
// can be restored into s.
func (s *WindowState[K, A]) layoutFits(h sectionHeader) error {
	if h.slices() && !s.sliced {
		return errSlices
	}
	return nil
}

// markFired raises the mark of how far k's windows fired to ft, making
// the map of marks if there is none. Not max(firedThrough[k], ft): a key
// without a mark reads 0 there, and a mark below 0 (a subtask that had no
// watermark yet, MinTime) became 0, so that the key's windows ending at or
// before 0 never fired.
func (sl *slicing[K, A]) markFired(k K, ft int64) {
	if sl.firedThrough == nil {
		sl.firedThrough = map[K]int64{}
	}
	if old, ok := sl.firedThrough[k]; !ok || ft > old {
		sl.firedThrough[k] = ft
	}
}

// restoreSliced restores a window of a checkpoint into s, which keeps
// slices: a slice, or a window kept whole; it replaces the entry of the
// key when there is one (a delta's). marked says whether the section's
// mark of how far its keys' windows fired holds for k (layoutSlicesMarked).
func (s *WindowState[K, A]) restoreSliced(k K, w Window, seq uint64, a *A, marked bool) error {
	if a == nil {
		a = new(A)
	}
	s.seq = max(s.seq, seq+1)
	s.sl.unsettled = true
	if ft := s.sl.sectionFired; ft > MinTime && marked {
		s.sl.markFired(k, ft)
	}
	// A slice, or a window kept whole; a delta's replaces the key's.
	var p *pane[K, A]
	switch w.End - w.Start {
	case s.assign.Slide:
		if w.Start != floorMultiple(w.Start, s.assign.Slide) {
			return fmt.Errorf("%w: slice %v of key %v does not start at a multiple of the slide (%dms)", codec.ErrCorrupt, w, k, s.assign.Slide)
		}
		p = s.panes[w.Start]
	case s.assign.Size:
		p = s.wholePane(w)
	default:
		return fmt.Errorf("%w: window %v of key %v: the windows are %dms long every %dms now: the window changed", codec.ErrCorrupt, w, k, s.assign.Size, s.assign.Slide)
	}
	if p != nil {
		if i, ok := p.idx.get(k); ok {
			if p.shared {
				p.own()
			}
			p.accs[i] = *a
			return nil
		}
	}
	if p == nil {
		if _, _, err := s.restorePane(k, w, seq, false, a); err != nil {
			return err
		}
	} else {
		s.appendRestored(p, k, seq, a)
	}
	s.n++
	return nil
}

// chainRestored notes the watermark of a chain of files just restored (c,
// or s itself for the first): the keys of a chain ahead of the lowest
// must not fire again the windows that fired before the checkpoint.
func (s *WindowState[K, A]) chainRestored(c *WindowState[K, A]) {
	s.sl.unsettled = true
	switch {
	case c == nil:
		// Restored into s itself: the first chain with windows.
		if s.restored && !s.sl.firstSet {
			s.sl.firstWM, s.sl.firstSet = s.wm, true
		}
		return
	case !s.sl.firstSet:
		s.sl.firstWM, s.sl.firstSet = c.wm, true
		return
	}
	if s.sl.firedThrough == nil && c.wm != s.sl.firstWM {
		// The first disagreement: every key so far came from chains at
		// the first watermark.
		s.sl.firedThrough = map[K]int64{}
		for p := range s.allPanes() {
			for _, k := range p.keys {
				s.sl.firedThrough[k] = s.sl.firstWM
			}
		}
	}
	if s.sl.firedThrough != nil {
		for p := range c.allPanes() {
			for _, k := range p.keys {
				s.sl.markFired(k, c.wm)
			}
		}
	}
	for k, ft := range c.sl.firedThrough {
		s.sl.markFired(k, ft)
	}
}

// mergeChain adds the slices and whole windows of a chain restored apart
// to s (EndChain), in ascending start and creation, as EndChain does per
// window.
func (s *WindowState[K, A]) mergeChain(c *WindowState[K, A]) error {
	s.wm = restoredWatermark(s.wm, !s.restored, c.wm)
	s.restored = true
	s.seq = max(s.seq, c.seq)
	all := slices.Collect(c.allPanes())
	perm := indexes(len(all))
	sortIndexes(perm, func(a, b int32) int {
		wa, wb := all[a].w, all[b].w
		return cmp.Or(cmp.Compare(wa.Start, wb.Start), cmp.Compare(wa.End, wb.End))
	})
	for _, j := range perm {
		p := all[j]
		c.sortPane(p)
		for i, k := range p.keys {
			if err := s.restoreSliced(k, p.w, p.seqs.at(i), &p.accs[i], true); err != nil {
				return err
			}
		}
	}
	return nil
}

// capture is capturePanes for the windows as d asks: the slices as they
// are (layoutSlices), or for a savepoint (d.Canonical) the windows whole.
func (s *WindowState[K, A]) capture(d Delta, mark bool) *WindowCapture[K, A] {
	if invariants.On {
		s.check()
	}
	if !s.sliced {
		return s.capturePanes(d.Full, d.Since, mark)
	}
	if d.Canonical {
		// The windows are made at the barrier; nothing changes them
		// after, so the capture shares their arrays.
		return s.wholeWindows().capturePanes(true, 0, false)
	}
	c := s.capturePanes(d.Full, d.Since, mark)
	c.layout = layoutSlices
	if s.sl.firedThrough != nil {
		c.layout = layoutSlicesMarked
		c.firedThrough = maps.Clone(s.sl.firedThrough)
	}
	return c
}

// wholeWindows returns the open windows of s (every window after the
// watermark with a slice or a whole window in it), each key's merged, in
// a state that keeps them per window, as savepoints hold them.
func (s *WindowState[K, A]) wholeWindows() *WindowState[K, A] {
	if s.sl.unsettled {
		s.settle()
	}
	w := NewWindowState[K, A](s.assign, 0, s.merge)
	w.wm, w.seq, w.restored = s.wm, s.seq, true
	ends := map[int64]bool{}
	for p := range s.allPanes() {
		last := p.w.End
		if p.w.End-p.w.Start == s.assign.Slide {
			last = p.w.Start + s.assign.Size
		}
		for e := max(p.w.End, s.nextFiring(p.w)+1); e <= last; e += s.assign.Slide {
			ends[e] = true
		}
	}
	for _, end := range slices.Sorted(maps.Keys(ends)) {
		s.fireWindow(end, func(k K, win Window, seq uint64, acc *A) {
			if _, _, err := w.restorePane(k, win, seq, false, acc); err != nil {
				panic(err) // a key fires once per window
			}
			w.n++
		})
	}
	return w
}
