package eventtime

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/intkey"
	"github.com/pipegen/pipegen/runtime/internal/invariants"
	"github.com/pipegen/pipegen/runtime/internal/pages"
	"github.com/pipegen/pipegen/runtime/state"
)

// WindowState is the state of one subtask of a windowed keyed aggregate or
// reduce: the open windows of every key, each with its accumulator.
//
// A window of a key is open from its first record until the watermark
// passes its MaxTimestamp plus the allowed lateness. It fires once, when
// the combined watermark (Advance) reaches its MaxTimestamp; a record that
// arrives for it after that and within the allowed lateness updates it, and
// the caller re-emits the result (Add's onUpdate). A window that gets its
// first record after its MaxTimestamp has passed (but within lateness) has
// no firing of its own: onUpdate reports it at once.
//
// Session windows merge: a record's window [ts, ts+Gap) merges with every
// session of its key that it overlaps or touches (Flink's rule: [a, b) and
// [c, d) merge when a <= d and c <= b), and so may bridge two sessions into
// one. The merged accumulator is the one of the earliest session, into which
// the others are merged in ascending Start (merge(dst, src)), and then the
// record is added. A merged window is a new window: it counts as fired when
// its own MaxTimestamp has been reached (then onUpdate reports it), and
// otherwise fires when it is reached, even if one of the sessions it grew
// from had fired already (as in Flink; the earlier result stays emitted).
// Lateness of a session record is judged on the merged window: a record
// whose own window is late can still join a session that is not.
//
// Windows due at the same watermark fire in ascending window end; windows
// with equal ends (those of different keys) in the order they were created.
// That order is kept by snapshots; after a restore that merged the
// snapshots of several subtasks, windows of equal end that different
// subtasks created fire in an unspecified but deterministic order.
//
// Tumbling and sliding windows are kept per window: a pane holds the
// accumulators of every key with records in one window, side by side, so
// that firing a window walks an array; a key's index in each pane is
// found with one map lookup per record (paneIndex for sliding windows,
// pane.idx for tumbling ones). Sessions are kept per key.
type WindowState[K comparable, A any] struct {
	assign   WindowAssigner
	lateness int64
	merge    func(dst, src *A)

	wm       int64 // the largest watermark of Advance
	n        int
	seq      uint64 // the creation number of the next window of a key
	restored bool
	buf      []Window
	// gap is the session gap of the record being added (AddGap), 0 for
	// the assigner's.
	gap int64

	// Tumbling and sliding windows: a pane per window, by Start. paneHeap
	// holds every pane at its MaxTimestamp until it has fired, then at the
	// time it is dropped.
	panes    map[int64]*pane[K, A]
	last     *pane[K, A] // the pane of the last record, without the index
	lastDrop int64       // the time last is dropped at (cleanup)
	paneHeap timeHeap[*pane[K, A]]
	// ix indexes the panes of sliding windows by key (paneindex.go); ring
	// caches the pane at each of its ring positions, to spare the map of
	// panes by start (nil or another start on a miss). ix is not generic
	// in A, so that the windows of a program with the same key type share
	// its code.
	ix   paneIndex[K]
	ring []*pane[K, A]

	// Session windows: the sessions of every key, sorted by Start, and all
	// of them in a heap like the panes.
	sessions    map[K][]*winEntry[K, A]
	sessionHeap timeHeap[*winEntry[K, A]]

	// epoch is the current epoch, the time between two checkpoints
	// (SnapshotDelta, Capture end it); once tracking is set, each window
	// of a pane that gets a record is stamped with it (pane.vers), for
	// deltas (tumbling and sliding windows only): the epoch less
	// stampBase (stamps.go, curStamp).
	epoch     uint64
	tracking  bool
	stampBase uint64
	// testSpan, when set, is the highest stamp instead of stampSpan
	// (SpanVar's value, or a test's).
	testSpan uint64
	// again is set by Acc when the record's window had fired already:
	// Added emits it again. cur and curIdx are that window and the key's
	// index in its pane.
	again  bool
	cur    winRef[K, A]
	curIdx int32
	// capturable is set when the windows may be captured for another
	// goroutine to encode (CanCapture).
	capturable bool
	// keyPointers and accPointers are set when K and A hold pointers
	// (strings count): a pane's arrays of them double apart (double).
	keyPointers, accPointers bool
	// spare holds the arrays of encoded captures for the next ones
	// (WindowCapture.Release).
	spare *captureSpares[A]
	// stampFired is set when firing changes the accumulators (a window
	// join's records take the emission's group): a window that fires is
	// then stamped as if it got a record, so that a delta holds it as it
	// is after firing, which a restore could not redo from the watermark.
	stampFired bool
	// intKeys is set when K is a 64-bit integer, which a tumbling
	// pane's keyIndex keeps in an array.
	intKeys bool
	// chain holds the windows of the files of one subtask of the
	// checkpoint being restored, when they are restored apart
	// (RestoreSection); inChain is set while a chain is read.
	chain   *WindowState[K, A]
	inChain bool

	// Sliding windows kept in slices (NewSlicedWindows,
	// windowslices.go): panes are the slices, and sl holds the windows
	// kept whole (restored from a savepoint, say) until they fire.
	sliced bool
	sl     slicing[K, A]
}

// pane is one tumbling or sliding window, with the accumulator of every
// key that has records in it, in the order of their creation numbers.
type pane[K comparable, A any] struct {
	heapSlot
	w     Window
	fired bool
	// unsorted is set when a restore added keys out of creation order;
	// the pane is sorted before it fires.
	unsorted bool
	// early holds the keys that had fired already in a snapshot that was
	// restored into a pane that had not: after a change of parallelism,
	// subtasks with different watermarks may meet. Usually nil.
	early map[int32]bool
	keys  []K
	// The index of each key: its paneIndex slot, or without the index
	// (tumbling windows) a keyIndex.
	slots []int32
	idx   keyIndex[K]
	seqs  seqList
	accs  []A
	// vers holds, per key, the stamp of the epoch its window last got a
	// record in (stamps.go), once changes are tracked, and is empty
	// before: a job without checkpoints spares the byte; ver is the
	// latest of those epochs (low 32 bits).
	vers []uint8
	ver  uint32
	// lo is the lowest index of a window stamped after epoch loSince
	// (len(keys) when none was): a delta captured on top of an epoch at
	// or after loSince holds only windows from lo on, which the capture
	// copies at the barrier (capturePanes) instead of sharing the arrays.
	// 0 and 0 say nothing: every window may have changed.
	lo      int32
	loSince uint64
	// shared is set when a capture that another goroutine may still be
	// encoding holds accs, vers and early: they are copied before they
	// are changed (own). keys, seqs and slots are only appended to, or
	// replaced whole (sortPane), so the capture's part of them stays.
	shared bool
}

// winEntry is one session of one key.
type winEntry[K comparable, A any] struct {
	heapSlot // seq is the session's creation number
	key      K
	w        Window
	fired    bool
	dead     bool
	acc      A
}

// winRef names a key's window that was updated or restored: a pane and a
// key, or a session.
type winRef[K comparable, A any] struct {
	p *pane[K, A]
	k K
	e *winEntry[K, A]
}

// dropped reports whether the window is no longer open.
func (r winRef[K, A]) dropped() bool {
	if r.e != nil {
		return r.e.dead
	}
	return r.p.hi < 0
}

// resolve returns the window of r, its creation number, whether it has
// fired, and its accumulator, valid until the next change of s.
func (s *WindowState[K, A]) resolve(r winRef[K, A]) (w Window, seq uint64, fired bool, acc *A) {
	if e := r.e; e != nil {
		return e.w, e.seq, e.fired, &e.acc
	}
	p := r.p
	if p.shared {
		p.own() // the caller may change the accumulator
	}
	i, _ := s.indexOf(p, r.k)
	return p.w, p.seqs.at(int(i)), p.fired || p.early[i], &p.accs[i]
}

// NewWindowState returns an empty window state. merge combines the
// accumulators of merging sessions and is required for session windows
// (nil otherwise). lateness is the allowed lateness in milliseconds. It
// panics on an invalid assigner: the compiler checks them.
func NewWindowState[K comparable, A any](a WindowAssigner, lateness int64, merge func(dst, src *A)) *WindowState[K, A] {
	if err := a.Validate(); err != nil {
		panic(err)
	}
	if lateness < 0 {
		panic(fmt.Sprintf("allowed lateness must not be negative, got %dms", lateness))
	}
	if a.Kind == Session && merge == nil {
		panic("session windows need a merge function")
	}
	ix := newPaneIndex[K](a)
	return &WindowState[K, A]{assign: a, lateness: lateness, merge: merge, wm: MinTime,
		panes: make(map[int64]*pane[K, A]), ix: ix, ring: make([]*pane[K, A], ix.width), sessions: make(map[K][]*winEntry[K, A]), epoch: 1,
		capturable:  a.Kind != Session && pointerFree(reflect.TypeFor[K]()) && pointerFree(reflect.TypeFor[A]()),
		keyPointers: hasPointers(reflect.TypeFor[K]()),
		accPointers: hasPointers(reflect.TypeFor[A]()),
		intKeys:     intkey.Is[K](), testSpan: envSpan}
}

// Len is the number of open windows, counted per key.
func (s *WindowState[K, A]) Len() int { return s.n }

// Watermark is the largest watermark Advance has seen (after a restore, the
// snapshot's), MinTime at first.
func (s *WindowState[K, A]) Watermark() int64 { return s.wm }

// cleanup is the time at which w is dropped; a slice's, when the last
// window it is part of fires.
func (s *WindowState[K, A]) cleanup(w Window) int64 {
	if s.sliced && w.End-w.Start == s.assign.Slide {
		return addSat(w.Start, s.assign.Size) - 1
	}
	return addSat(w.MaxTimestamp(), s.lateness)
}

// Add adds a record of key k at time ts, which came from an input whose
// watermark is inputWatermark: add folds the record into the accumulator of
// each window the record belongs to and that is not late for it (a new
// window's accumulator starts as the zero A). It returns false when the
// record belongs to windows and all of them are late: nothing changed, the
// caller sends the record to the side output. (A sliding window's record
// that falls between windows belongs to none: it is not late, and it
// changes nothing.)
//
// onUpdate is called, after add, for each window that got the record and
// has fired already, in ascending window order: the caller re-emits its
// result. acc is valid only during the call, which must not call s.
func (s *WindowState[K, A]) Add(k K, ts, inputWatermark int64, add func(acc *A), onUpdate func(k K, w Window, acc *A)) bool {
	if s.sliced {
		return s.addSliced(k, ts, inputWatermark, add)
	}
	if s.ix.width > 0 && ts > -slidingSafe && ts < slidingSafe && s.assign.Size < slidingSafe {
		return s.addSliding(k, ts, max(inputWatermark, s.wm), add, onUpdate)
	}
	return s.add(k, ts, inputWatermark, add, onUpdate, nil, nil)
}

// slidingSafe bounds the times and sizes that addSliding takes: far
// enough from MinTime and MaxTime that no window's bounds saturate.
const slidingSafe = 1 << 60

// addSliding is add for sliding windows with the pane index, the path of
// every record of q5 of Nexmark: the record's windows are counted rather
// than assigned into a buffer, and a key found in the ring of its slot
// (nearly always) takes no call to entry.
func (s *WindowState[K, A]) addSliding(k K, ts, wm int64, add func(acc *A), onUpdate func(k K, w Window, acc *A)) bool {
	step, size := s.ix.step, s.assign.Size
	r := ts % step
	if r < 0 {
		r += step
	}
	last := ts - r // the latest window's start
	// The earliest window that holds ts starts after ts-size.
	start := last - (last+size-ts-1)/step*step
	// Windows are in ascending order, and so are their cleanup times: the
	// late ones come first.
	for addSat(start+size-1, s.lateness) <= wm {
		if start += step; start > last {
			return false
		}
	}
	sl := s.ix.slot(k)
	pos := s.ix.firstPos(start)
	for ; start <= last; start += step {
		p := s.ring[pos]
		var i int32
		if p != nil && p.w.Start == start && !p.shared {
			if ref := s.ix.ref(sl, pos); ref.i >= 0 && ref.start == start {
				i = ref.i
				if s.tracking && p.vers[i] != s.curStamp() {
					s.restamp(p, i)
				}
			} else {
				p, i = s.entry(k, Window{start, start + size}, true, sl, pos)
			}
		} else {
			p, i = s.entry(k, Window{start, start + size}, true, sl, pos)
		}
		acc := &p.accs[i]
		add(acc)
		if (p.fired || p.early != nil && p.early[i]) && onUpdate != nil {
			onUpdate(k, p.w, acc)
		}
		if pos++; pos == s.ix.width {
			pos = 0
		}
	}
	return true
}

// AddGap is Add for sessions whose gap comes with each record
// (WindowAssigner.DynamicGap): the record's session is [ts, ts+gap),
// merged with the key's sessions it overlaps or touches. It panics when
// gap is not positive: the caller checks the user's gap.
func (s *WindowState[K, A]) AddGap(k K, ts, gap, inputWatermark int64, add func(acc *A), onUpdate func(k K, w Window, acc *A)) bool {
	return s.addGap(k, ts, gap, inputWatermark, add, onUpdate, nil)
}

func (s *WindowState[K, A]) addGap(k K, ts, gap, inputWatermark int64, add func(acc *A), onUpdate func(k K, w Window, acc *A), each func(k K, w Window, fired bool, acc *A)) bool {
	if gap <= 0 || s.assign.Kind != Session {
		panic(fmt.Sprintf("a session gap must be positive, got %dms", gap))
	}
	s.gap = gap
	ok := s.add(k, ts, inputWatermark, add, onUpdate, nil, each)
	s.gap = 0
	return ok
}

// add is Add that also reports updated windows to onRef, and every
// window that got the record, whether or not it fired, to each.
func (s *WindowState[K, A]) add(k K, ts, inputWatermark int64, add func(acc *A), onUpdate func(k K, w Window, acc *A), onRef func(winRef[K, A]), each func(k K, w Window, fired bool, acc *A)) bool {
	wm := max(inputWatermark, s.wm)
	if s.assign.Kind == Session {
		return s.addSession(k, ts, wm, add, onUpdate, onRef, each)
	}
	s.buf = s.assign.Assign(ts, s.buf)
	ws := s.buf
	if len(ws) == 0 {
		return true
	}
	// Windows are in ascending order, and so are their cleanup times: the
	// late ones come first.
	first := 0
	for first < len(ws) && s.cleanup(ws[first]) <= wm {
		first++
	}
	if first == len(ws) {
		return false
	}
	ix := s.ix.width > 0
	var sl int32
	pos := 0
	if ix {
		sl = s.ix.slot(k)
		pos = s.ix.firstPos(ws[first].Start)
	}
	for j, w := range ws[first:] {
		if ix && j > 0 {
			// The windows of a record are a slide apart but at the
			// extremes of time.
			if w.Start == ws[first+j-1].Start+s.ix.step {
				if pos++; pos == s.ix.width {
					pos = 0
				}
			} else {
				pos = s.ix.pos(w.Start)
			}
		}
		p, i := s.entry(k, w, ix, sl, pos)
		acc := &p.accs[i]
		add(acc)
		if each != nil {
			each(k, w, p.fired || p.early != nil && p.early[i], acc)
		}
		if p.fired || p.early != nil && p.early[i] {
			if onUpdate != nil {
				onUpdate(k, w, acc)
			}
			if onRef != nil {
				onRef(winRef[K, A]{p: p, k: k})
			}
		}
	}
	return true
}

// entry returns the pane of window w and the index in it of key k's
// accumulator, making either when new, for a record about to change it;
// ix, sl and pos are k's slot and w's place in the index when ix is set.
func (s *WindowState[K, A]) entry(k K, w Window, ix bool, sl int32, pos int) (*pane[K, A], int32) {
	p := s.pane(w, pos)
	return p, s.entryIn(p, k, ix, sl, pos)
}

// entryIn is entry in p, the pane of the window.
func (s *WindowState[K, A]) entryIn(p *pane[K, A], k K, ix bool, sl int32, pos int) int32 {
	w := p.w
	if p.shared {
		p.own()
	}
	var i int32
	var ok bool
	if ix {
		i, ok = s.ix.find(sl, k, w.Start, pos)
	} else {
		i, ok = p.idx.get(k)
	}
	if !ok {
		i = int32(len(p.keys))
		if len(p.keys) == cap(p.keys) && len(p.keys) >= doubleFrom {
			p.double(ix, s.keyPointers, s.accPointers)
		}
		if ix {
			s.ix.put(sl, k, w.Start, pos, i)
			p.slots = append(p.slots, sl)
		} else {
			p.idx.put(k, i)
		}
		p.keys = append(p.keys, k)
		p.seqs.add(s.seq)
		s.seq++
		var zero A
		p.accs = append(p.accs, zero)
		if s.tracking {
			p.vers = append(p.vers, 0)
		}
		s.n++
	}
	if s.tracking && p.vers[i] != s.curStamp() {
		s.restamp(p, i)
	}
	return i
}

// stamp marks window i of pane p as changed in the current epoch, for
// deltas, when changes are tracked. The per-record paths where p cannot
// be shared (addSliding, entryIn) write the check out and call restamp:
// the check then costs no call on every record.
func (s *WindowState[K, A]) stamp(p *pane[K, A], i int32) {
	if s.tracking && p.vers[i] != s.curStamp() {
		if p.shared {
			p.own()
		}
		s.restamp(p, i)
	}
}

// restamp stamps window i of pane p, which is its own, with the current
// epoch: its first change in the epoch.
func (s *WindowState[K, A]) restamp(p *pane[K, A], i int32) {
	p.vers[i] = s.curStamp()
	p.ver = uint32(s.epoch)
	p.lo = min(p.lo, i)
}

// touch is stamp for the window of r, a pane's (sessions are written
// whole).
func (s *WindowState[K, A]) touch(r winRef[K, A]) {
	if !s.tracking || r.e != nil {
		return
	}
	i, _ := s.indexOf(r.p, r.k)
	s.stamp(r.p, i)
}

// double doubles the room of a pane for keys (and their slots in the
// index of sliding windows, when ix): append grows large slices by a
// quarter, and a pane of q5 of Nexmark that grew to 300K keys so was
// copied some ten times over (memmove and page faults, 8% of its CPU at
// 20M events); q8's join, whose windows hold each person's records
// (pointers, so the copies also run the collector's write barriers), had
// 6% of its CPU in growing its tumbling pane.
//
// The new arrays are made and copied into (doubled), not grown by
// append: append clears the room after the copy, which touches every
// page of it, while memory fresh from the operating system is zero
// already and make leaves it untouched; the room's pages are then
// mapped only as windows fill them. That halved the page faults of q5
// (5M events: peak memory 103 MB against 162, CPU 0.81 of append's;
// examples/nexmark/README.md, q5 on the EPYC machine, has the runs).
// keyPointers and accPointers are set when the keys and the accumulators
// hold pointers.
func (p *pane[K, A]) double(ix, keyPointers, accPointers bool) {
	p.keys = doubledAs(p.keys, keyPointers)
	if ix {
		p.slots = doubled(p.slots)
	}
	p.seqs.double()
	p.accs = doubledAs(p.accs, accPointers)
	if len(p.vers) > 0 {
		p.vers = doubled(p.vers)
	}
}

// doubled returns a copy of x with room for as many elements again (at
// least minGrown), copied in pieces that the collector can stop the
// goroutine between (pages.Copy); the room is left untouched.
func doubled[T any](x []T) []T {
	y := make([]T, len(x), max(2*len(x), minGrown))
	pages.Copy(y, x)
	return y
}

// minGrown is the least room doubled and doubledPointers make.
const minGrown = 16

// doubleFrom is the length from which a pane's arrays and a timer heap
// double (doubled, doubledPointers) instead of growing by append, which
// for large slices copies whole in one call the collector cannot stop
// the goroutine in, by a quarter at a time.
const doubleFrom = 1024

// doubledAs is doubledPointers for elements that hold pointers, else
// doubled.
func doubledAs[T any](x []T, pointers bool) []T {
	if pointers {
		return doubledPointers(x)
	}
	return doubled(x)
}

// doubledPointers is doubled for elements that hold pointers, whose
// arrays the collector scans up to their capacity and whose copy runs its
// write barrier, which reads each slot of the destination first: every
// page of the new array is touched before anything reads it, and the
// copy goes in pieces that the collector can stop the goroutine between
// (runtime/internal/pages). Nexmark q8's join, whose pane holds each
// person's records, had 17% of its samples (20M events, p=1) under the
// copies of doubling: page faults taken twice in the barrier's reads,
// and the collector spinning and signalling for the goroutine inside the
// copy.
func doubledPointers[T any](x []T) []T {
	y := make([]T, 0, max(2*len(x), minGrown))
	pages.Touch(y)
	y = y[:len(x)]
	pages.Copy(y, x)
	return y
}

// Acc is Add for tumbling windows without the function: it returns the
// accumulator of the window that a record of key k at time ts belongs to
// (a new window's starts as the zero A), for the caller to fold the
// record into and then call Added; nil when the window is late for the
// record (Add's false). Generated code calls the user's function on it
// directly, inlined if it can be, where Add calls a closure per record
// that holds the record. It panics for other windows, which a record can
// belong to several or none of: they take Add.
//
// Most records of in-order input are for a key that is already in the
// last record's window, which is open, not held by a capture, and was
// stamped in this epoch: that case takes one function with no call in it
// (keyIndex.get inlines), and everything else the rest (acc). Nexmark
// q7's buckets, 64 keys in one window, take 5.1 ns a record with Added
// instead of 7.1 (BenchmarkWindowStateAccFew; the same fold into an array
// of 64 accumulators takes 1.4). It leaves again as the last Added did:
// false.
func (s *WindowState[K, A]) Acc(k K, ts, inputWatermark int64) *A {
	if p := s.last; p != nil && ts >= p.w.Start && ts < p.w.End && s.lastDrop > inputWatermark && s.lastDrop > s.wm && !p.fired && p.early == nil && !p.shared {
		if i, ok := p.idx.get(k); ok && (!s.tracking || p.vers[i] == s.curStamp()) {
			return &p.accs[i]
		}
	}
	return s.acc(k, ts, inputWatermark)
}

// acc is Acc's every case: a new window or key, a late record, a window
// that fired already or that a capture holds, a first change in an epoch.
func (s *WindowState[K, A]) acc(k K, ts, inputWatermark int64) *A {
	if s.assign.Kind != Tumbling || s.ix.width > 0 {
		panic("WindowState.Acc takes tumbling windows; others take Add")
	}
	wm := max(inputWatermark, s.wm)
	// In order input most records fall in the last record's window: its
	// bounds and drop time are at hand, no division or saturating sums.
	p := s.last
	if p == nil || ts < p.w.Start || ts >= p.w.End {
		w := s.assign.tumbling(ts)
		if s.cleanup(w) <= wm {
			return nil
		}
		p = s.pane(w, 0)
	} else if s.lastDrop <= wm {
		return nil
	}
	i := s.entryIn(p, k, false, 0, 0)
	s.again = p.fired || p.early != nil && p.early[i]
	if s.again {
		s.cur = winRef[K, A]{p: p, k: k}
		s.curIdx = i
	}
	return &p.accs[i]
}

// Added ends an Acc whose accumulator the caller changed: when its window
// had fired already (a late record within the allowed lateness), onUpdate
// gets the window again, as Add calls it.
func (s *WindowState[K, A]) Added(onUpdate func(k K, w Window, acc *A)) {
	if s.again {
		s.updated(onUpdate)
	}
}

// updated is the rest of Added, out of line so that Added inlines.
func (s *WindowState[K, A]) updated(onUpdate func(k K, w Window, acc *A)) {
	s.again = false
	p, k := s.cur.p, s.cur.k
	s.cur = winRef[K, A]{}
	if onUpdate != nil {
		onUpdate(k, p.w, &p.accs[s.curIdx])
	}
}

// pane returns the pane of w, at ring position pos of the index, making
// it when it is new: due at its MaxTimestamp, or fired at once if the
// watermark has passed that already.
func (s *WindowState[K, A]) pane(w Window, pos int) *pane[K, A] {
	cached := s.last
	if s.ix.width > 0 {
		cached = s.ring[pos]
	}
	if cached != nil && cached.w.Start == w.Start {
		return cached
	}
	p := s.panes[w.Start]
	if p == nil {
		p = &pane[K, A]{w: w}
		if s.ix.width == 0 {
			hint := 0
			if s.last != nil {
				hint = len(s.last.keys) // the next window has about as many keys
			}
			p.idx = newKeyIndex[K](s.intKeys, hint)
		}
		p.fired = !s.sliced && w.MaxTimestamp() <= s.wm
		s.schedulePane(p)
		s.panes[w.Start] = p
		s.paneHeap.push(p)
	}
	if s.ix.width > 0 {
		s.ring[pos] = p
	} else {
		s.last, s.lastDrop = p, s.cleanup(p.w)
	}
	return p
}

// indexOf returns k's index in p, if k is in it.
func (s *WindowState[K, A]) indexOf(p *pane[K, A], k K) (int32, bool) {
	if s.ix.width > 0 {
		return s.ix.lookup(p.w.Start, k)
	}
	return p.idx.get(k)
}

// dropPane forgets p, which is out of the heap.
func (s *WindowState[K, A]) dropPane(p *pane[K, A]) {
	delete(s.panes, p.w.Start)
	s.n -= len(p.keys)
	if s.ix.width == 0 {
		if s.last == p {
			s.last = nil
		}
		return
	}
	pos := s.ix.pos(p.w.Start)
	if s.ring[pos] == p {
		s.ring[pos] = nil
	}
	for i, sl := range p.slots {
		s.ix.remove(sl, p.keys[i], p.w.Start, pos)
	}
}

func (s *WindowState[K, A]) schedulePane(p *pane[K, A]) {
	if s.sliced && p.w.End-p.w.Start == s.assign.Slide {
		p.at = s.nextFiring(p.w)
		return
	}
	if p.fired {
		p.at = s.cleanup(p.w)
	} else {
		p.at = p.w.MaxTimestamp()
	}
}

// sortPane puts a restored pane's keys in creation order.
func (s *WindowState[K, A]) sortPane(p *pane[K, A]) {
	if !p.unsorted {
		return
	}
	p.unsorted = false
	perm := indexes(len(p.keys))
	sortIndexes(perm, func(a, b int32) int { return cmp.Compare(p.seqs.at(int(a)), p.seqs.at(int(b))) })
	keys, seqs, accs := make([]K, len(perm)), make([]uint64, len(perm)), make([]A, len(perm))
	var vers []uint8
	if len(p.vers) > 0 {
		vers = make([]uint8, len(perm))
	}
	var slots []int32
	var pos int
	if s.ix.width > 0 {
		slots = make([]int32, len(perm))
		pos = s.ix.pos(p.w.Start)
	}
	var early map[int32]bool
	for to, from := range perm {
		keys[to], seqs[to], accs[to] = p.keys[from], p.seqs.at(int(from)), p.accs[from]
		if vers != nil {
			vers[to] = p.vers[from]
		}
		if slots != nil {
			slots[to] = p.slots[from]
			s.ix.set(slots[to], keys[to], p.w.Start, pos, int32(to))
		} else {
			p.idx.put(keys[to], int32(to))
		}
		if p.early[from] {
			if early == nil {
				early = make(map[int32]bool)
			}
			early[int32(to)] = true
		}
	}
	p.keys, p.slots, p.seqs, p.accs, p.vers, p.early = keys, slots, newSeqList(seqs), accs, vers, early
	p.shared = false       // no capture holds the new arrays
	p.lo, p.loSince = 0, 0 // the windows moved
}

func (s *WindowState[K, A]) addSession(k K, ts, wm int64, add func(acc *A), onUpdate func(k K, w Window, acc *A), onRef func(winRef[K, A]), each func(k K, w Window, fired bool, acc *A)) bool {
	s.buf = s.assign.Assign(ts, s.buf)
	c := s.buf[0]
	if s.gap > 0 {
		c.End = addSat(c.Start, s.gap)
	} else if s.assign.DynamicGap {
		panic("sessions with a gap per record take it with AddGap")
	}
	wins := s.sessions[k]
	// Sessions of a key are disjoint and apart, sorted by Start (so also by
	// End): those that c overlaps or touches are a run [i, j).
	i := 0
	for i < len(wins) && wins[i].w.End < c.Start {
		i++
	}
	j := i
	m := c
	for j < len(wins) && wins[j].w.Start <= c.End {
		m.Start = min(m.Start, wins[j].w.Start)
		m.End = max(m.End, wins[j].w.End)
		j++
	}
	if s.cleanup(m) <= wm {
		return false
	}
	var e *winEntry[K, A]
	if i == j {
		e = &winEntry[K, A]{key: k, w: m}
		e.seq = s.seq
		s.seq++
		s.n++
		s.scheduleSession(e)
		s.sessionHeap.push(e)
		s.sessions[k] = slices.Insert(wins, i, e)
	} else {
		e = wins[i]
		for _, o := range wins[i+1 : j] {
			s.merge(&e.acc, &o.acc)
			s.dropSession(o)
		}
		if j > i+1 {
			s.sessions[k] = slices.Delete(wins, i+1, j)
		}
		if m != e.w {
			e.w = m
			s.scheduleSession(e)
			s.sessionHeap.fix(e.hi)
		}
	}
	add(&e.acc)
	if each != nil {
		each(k, e.w, e.fired, &e.acc)
	}
	if e.fired {
		if onUpdate != nil {
			onUpdate(k, e.w, &e.acc)
		}
		if onRef != nil {
			onRef(winRef[K, A]{e: e})
		}
	}
	return true
}

// scheduleSession sets whether e has fired, from its window and the
// watermark, and its time in the heap.
func (s *WindowState[K, A]) scheduleSession(e *winEntry[K, A]) {
	e.fired = e.w.MaxTimestamp() <= s.wm
	if e.fired {
		e.at = s.cleanup(e.w)
	} else {
		e.at = e.w.MaxTimestamp()
	}
}

// dropSession takes e out of the heap and the count; the caller takes it
// out of its key's sessions.
func (s *WindowState[K, A]) dropSession(e *winEntry[K, A]) {
	s.sessionHeap.remove(e.hi)
	e.dead = true
	s.n--
}

// Advance moves the combined watermark to wm: every open window with
// MaxTimestamp <= wm that has not fired fires once, in ascending window
// end; then windows with MaxTimestamp + lateness <= wm are dropped. acc is
// valid only during the call, which must not call s. Advance costs next to
// nothing when no window is due.
func (s *WindowState[K, A]) Advance(wm int64, fire func(k K, w Window, acc *A)) {
	if s.sl.unsettled {
		s.settle() // at the restored watermark, before it moves
	}
	s.wm = max(s.wm, wm)
	wm = s.wm
	if s.sliced {
		s.advanceSliced(fire)
		return
	}
	for len(s.paneHeap) > 0 && s.paneHeap[0].at <= wm {
		p := s.paneHeap[0]
		if !p.fired {
			p.fired = true
			if fire != nil {
				s.sortPane(p)
				if p.shared {
					p.own() // fire may change the accumulators
				}
				for i := range p.keys {
					if p.early == nil || !p.early[int32(i)] {
						fire(p.keys[i], p.w, &p.accs[i])
					}
				}
				if s.stampFired && s.tracking {
					for i := range p.keys {
						s.stamp(p, int32(i))
					}
				}
			}
			p.early = nil
			if c := s.cleanup(p.w); c > wm {
				p.at = c
				s.paneHeap.fix(0)
				continue
			}
		}
		s.paneHeap.remove(0)
		s.dropPane(p)
	}
	for len(s.sessionHeap) > 0 && s.sessionHeap[0].at <= wm {
		e := s.sessionHeap[0]
		if !e.fired {
			e.fired = true
			if fire != nil {
				fire(e.key, e.w, &e.acc)
			}
			if c := s.cleanup(e.w); c > wm {
				e.at = c
				s.sessionHeap.fix(0)
				continue
			}
		}
		s.dropSession(e)
		wins := s.sessions[e.key]
		i := slices.Index(wins, e)
		wins = slices.Delete(wins, i, i+1)
		if len(wins) == 0 {
			delete(s.sessions, e.key)
		} else {
			s.sessions[e.key] = wins
		}
	}
}

// Snapshot writes every open window of every key into the section of the
// key's group: per key and window the key (encK), the window's bounds,
// its creation number, whether it fired, and its accumulator (encA), pane
// by pane for tumbling and sliding windows (layoutPanes), an entry each
// for sessions. Every section starts with the watermark. It runs on the
// operator's goroutine at the barrier.
func (s *WindowState[K, A]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encA func(*codec.Writer, *A)) error {
	return s.snapshot(sec, keyGroup, encK, encA, sectionHeader{})
}

func (s *WindowState[K, A]) snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encA func(*codec.Writer, *A), h sectionHeader) error {
	if s.assign.Kind != Session {
		// The panes' windows as a capture encodes them, at once.
		c := s.capture(Delta{Full: true}, false)
		c.h.seq2, c.h.group = h.seq2, h.group
		return c.Encode(sec, keyGroup, encK, encA)
	}
	if invariants.On {
		s.check()
	}
	h.wm, h.seq = s.wm, s.seq
	writeSectionHeaders(sec, h)
	for k, wins := range s.sessions {
		for _, e := range wins {
			w, err := keySection(sec, keyGroup, k)
			if err != nil {
				return err
			}
			writeWindowEntry(w, false, k, e.w, e.seq, e.fired, &e.acc, encK, encA)
		}
	}
	return nil
}

// Restore adds the windows of one key group's section to a state that
// holds none of its keys (a fresh one, into which the sections of a
// subtask's key groups are restored one by one). The watermark becomes the
// section's, or the lowest of the sections' when they differ.
func (s *WindowState[K, A]) Restore(section []byte, decK func(*codec.Reader) K, decA func(*codec.Reader) *A) error {
	if s.sliced {
		// A section's watermark is its own subtask's: slices of keys
		// whose subtask was ahead must not fire again (EndChain).
		if err := s.RestoreSection(section, false, decK, decA); err != nil {
			return err
		}
		return s.EndChain()
	}
	_, err := s.restore(section, decK, decA, nil)
	return err
}

func (s *WindowState[K, A]) restore(section []byte, decK func(*codec.Reader) K, decA func(*codec.Reader) *A, onRef func(winRef[K, A], bool, *A)) (sectionHeader, error) {
	r := codec.NewReader(section)
	h, ok := readSectionHeader(r)
	if !ok {
		return h, r.Err()
	}
	if err := s.layoutFits(h); err != nil {
		return h, err
	}
	s.wm = restoredWatermark(s.wm, !s.restored, h.wm)
	s.restored = true
	s.seq = max(s.seq, h.seq)
	s.sl.sectionFired = h.fired
	err := readWindows(r, h, false, decK, decA, func(k K, w Window, seq uint64, fired bool, a *A) error {
		if s.sliced {
			return s.restoreSliced(k, w, seq, a, h.markHolds(fired))
		}
		if err := s.fits(w); err != nil {
			return fmt.Errorf("%w: window %v of key %v: %w", codec.ErrCorrupt, w, k, err)
		}
		if a == nil {
			a = new(A)
		}
		s.seq = max(s.seq, seq+1)
		var ref winRef[K, A]
		var acc *A
		if s.assign.Kind == Session {
			e, err := s.restoreSession(k, w, seq, fired, a)
			if err != nil {
				return err
			}
			ref, acc = winRef[K, A]{e: e}, &e.acc
		} else {
			p, i, err := s.restorePane(k, w, seq, fired, a)
			if err != nil {
				return err
			}
			ref, acc = winRef[K, A]{p: p, k: k}, &p.accs[i]
		}
		s.n++
		if onRef != nil {
			onRef(ref, fired, acc)
		}
		return nil
	})
	return h, err
}

// fits checks a restored window against the assigner.
func (s *WindowState[K, A]) fits(w Window) error {
	if w.End <= w.Start {
		return fmt.Errorf("empty")
	}
	if s.assign.Kind != Session && w.End-w.Start != s.assign.Size && w.Start != MinTime && w.End != MaxTime {
		return fmt.Errorf("the windows are %dms long now: the window size changed", s.assign.Size)
	}
	return nil
}

func (s *WindowState[K, A]) restorePane(k K, w Window, seq uint64, fired bool, a *A) (*pane[K, A], int32, error) {
	p := s.panes[w.Start]
	if p == nil {
		p = &pane[K, A]{w: w, fired: fired}
		if s.ix.width == 0 {
			p.idx = newKeyIndex[K](s.intKeys, 0)
		}
		s.schedulePane(p)
		s.panes[w.Start] = p
		s.paneHeap.push(p)
	}
	if _, dup := s.indexOf(p, k); dup {
		return nil, 0, fmt.Errorf("%w: window %v of key %v restored twice", codec.ErrCorrupt, w, k)
	}
	i := s.appendRestored(p, k, seq, a)
	switch {
	case p.fired && !fired:
		// The window fired in another subtask's snapshot but not in this
		// one's: it fires again for this key only.
		p.fired = false
		p.early = make(map[int32]bool)
		for j := range i {
			p.early[j] = true
		}
		s.schedulePane(p)
		s.paneHeap.fix(p.hi)
	case !p.fired && fired:
		if p.shared {
			p.own()
		}
		if p.early == nil {
			p.early = make(map[int32]bool)
		}
		p.early[i] = true
	}
	return p, i, nil
}

// appendRestored adds key k's restored window, of creation number seq and
// accumulator a, to pane p, which does not hold k, and returns its index.
func (s *WindowState[K, A]) appendRestored(p *pane[K, A], k K, seq uint64, a *A) int32 {
	i := int32(len(p.keys))
	if i > 0 && p.seqs.at(int(i-1)) > seq {
		p.unsorted = true
	}
	if s.ix.width > 0 {
		sl := s.ix.slot(k)
		s.ix.put(sl, k, p.w.Start, s.ix.pos(p.w.Start), i)
		p.slots = append(p.slots, sl)
	} else {
		p.idx.put(k, i)
	}
	p.keys = append(p.keys, k)
	p.seqs.add(seq)
	p.accs = append(p.accs, *a)
	if s.tracking {
		p.vers = append(p.vers, 0)
	}
	return i
}

func (s *WindowState[K, A]) restoreSession(k K, w Window, seq uint64, fired bool, a *A) (*winEntry[K, A], error) {
	wins := s.sessions[k]
	i := 0
	for i < len(wins) && wins[i].w.Start < w.Start {
		i++
	}
	if i > 0 && wins[i-1].w.End >= w.Start || i < len(wins) && wins[i].w.Start <= w.End {
		return nil, fmt.Errorf("%w: session %v of key %v overlaps another", codec.ErrCorrupt, w, k)
	}
	e := &winEntry[K, A]{key: k, w: w, fired: fired, acc: *a}
	e.seq = seq
	if fired {
		e.at = s.cleanup(w)
	} else {
		e.at = w.MaxTimestamp()
	}
	s.sessionHeap.push(e)
	s.sessions[k] = slices.Insert(wins, i, e)
	return e, nil
}

// openWindow is a window of a key that has not fired, for openWindows.
type openWindow[K comparable, A any] struct {
	k   K
	w   Window
	seq uint64
	acc *A
}

// openWindows appends to buf the windows that have not fired, with their
// accumulators, in the order they would fire: ascending end, then
// creation. The accumulators are valid until the next change of s.
func (s *WindowState[K, A]) openWindows(buf []openWindow[K, A]) []openWindow[K, A] {
	buf = buf[:0]
	for _, p := range s.panes {
		if p.fired {
			continue
		}
		if p.shared {
			p.own() // the caller may change the accumulators
		}
		for i, k := range p.keys {
			if p.early == nil || !p.early[int32(i)] {
				buf = append(buf, openWindow[K, A]{k: k, w: p.w, seq: p.seqs.at(i), acc: &p.accs[i]})
			}
		}
	}
	for k, wins := range s.sessions {
		for _, e := range wins {
			if !e.fired {
				buf = append(buf, openWindow[K, A]{k: k, w: e.w, seq: e.seq, acc: &e.acc})
			}
		}
	}
	slices.SortFunc(buf, func(a, b openWindow[K, A]) int {
		return cmp.Or(cmp.Compare(a.w.End, b.w.End), cmp.Compare(a.seq, b.seq))
	})
	return buf
}
