package eventtime

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

// Copy-on-write captures of tumbling and sliding windows.
//
// Encoding every window at the barrier stalled the operator for as long
// as the state is large: Nexmark q5's 1.5M windows took about 100 ms, 65
// ns a window. Capture instead records each pane as it is, its window,
// whether it fired and the headers of its arrays, a few words per pane,
// and marks the pane shared; another goroutine (the checkpoint writer)
// encodes the capture while the operator goes on. A change to a shared
// pane's accumulators, stamps or early firings copies those arrays first
// (pane.own), so that the capture keeps them as they were at the barrier;
// keys, creation numbers and index slots are only appended to (the
// capture reads up to its own length) or replaced whole (sortPane).
// Copying an array costs about a nanosecond a window, once per pane and
// checkpoint, and only for panes that change while a capture may hold
// them; the check is one comparison per record and pane.
//
// An open pane is not shared: every one of its windows is changed by
// the next records (q5's five panes hold every auction), and copying the
// whole arrays on write cost a copy of every window of the pane at each
// checkpoint. The capture copies instead, at the barrier, the windows
// that it needs: a delta only those from the lowest index stamped since
// its base (pane.lo), which for keys that are growing ids (Nexmark's
// auctions) are the newest few; the pane then changes its arrays in
// place. Fired panes, which may not change again, are still shared
// unless the copy would be at most half of them. The copies go into the
// arrays of an earlier capture once the writer is done with it
// (Release), not into fresh memory.
//
// The first file of a state, full or delta, has no size hint for its
// sections; Encode sizes them as it goes (sectionSizer).
//
// The mark is not cleared when the writer is done: the pane's next change
// copies once more than it would need to, which spares the operator any
// synchronisation with the writer, and lets captures overlap (a capture
// taken while the previous one is still being encoded marks the same
// arrays, which no one changes in place).
//
// A copy of an accumulator by value is a copy of the capture's only when
// the accumulator refers to nothing that is changed in place: a pointer,
// slice, map, channel, function or interface in it would be shared with
// the operator. Only windows whose keys and accumulators are made of
// numbers, booleans, strings (immutable), and arrays and structs of those
// are captured (CanCapture); the others are encoded at the barrier
// (SnapshotDelta), as are sessions.

// WindowCapture is the tumbling or sliding windows of a WindowState as
// they were at a barrier (Capture), which Encode writes on any goroutine
// while the state goes on changing.
type WindowCapture[K comparable, A any] struct {
	h      sectionHeader
	layout uint64 // layoutPanes, or layoutSlices
	// firedThrough is the slices' (slicing.firedThrough) at the barrier.
	firedThrough map[K]int64
	full         bool
	since        uint64
	// stampBase is the state's at the barrier: the stamps' base.
	stampBase uint64
	panes     []paneCapture[K, A]
	// spare takes the copies back (Release); nil when there are none.
	spare *captureSpares[A]
}

// paneCapture is a pane at the barrier: its arrays are never changed in
// place after it (pane.shared), or accs and vers are copies of the
// pane's from index off on (the windows before off did not change
// after the capture's base).
type paneCapture[K comparable, A any] struct {
	w     Window
	fired bool
	early map[int32]bool
	keys  []K
	seqs  seqList
	off   int
	accs  []A
	vers  []uint8
	// copied is set when accs and vers are the capture's own copies,
	// which Release gives back.
	copied bool
}

// CanCapture reports whether Capture may be used: the windows are
// tumbling or sliding, and their keys and accumulators hold no
// references that could change in place (no pointers, slices, maps,
// channels, functions or interfaces; strings are fine).
func (s *WindowState[K, A]) CanCapture() bool { return s.capturable }

// Capture ends the epoch, as SnapshotDelta does, and returns the windows
// that d says as they are now: every open window, or those that got
// records after epoch d.Since. It does not encode them: the capture's
// Encode does, on another goroutine if need be, while s goes on changing.
// Its cost is a few words per pane (and sorting the panes), whatever the
// number of windows. It fails when CanCapture is false.
func (s *WindowState[K, A]) Capture(d Delta) (*WindowCapture[K, A], uint64, error) {
	if !s.capturable {
		var k K
		var a A
		return nil, 0, fmt.Errorf("windows of %T keys and %T accumulators cannot be captured: sessions, or a type that holds pointers; encode them at the barrier (SnapshotDelta)", k, a)
	}
	return s.capture(d, true), s.closeEpoch(), nil
}

// capturePanes captures the panes: every one when full is set, else those
// with windows that changed after epoch since. Unless mark is set the
// capture must be encoded before s changes.
func (s *WindowState[K, A]) capturePanes(full bool, since uint64, mark bool) *WindowCapture[K, A] {
	c := &WindowCapture[K, A]{h: sectionHeader{wm: s.wm, seq: s.seq}, layout: layoutPanes, full: full, since: since, stampBase: s.stampBase,
		panes: make([]paneCapture[K, A], 0, len(s.panes)+len(s.sl.whole))}
	for p := range s.allPanes() {
		if !full && !changedAfter(p.ver, since) {
			continue
		}
		pc := paneCapture[K, A]{w: p.w, fired: p.fired, early: p.early, keys: p.keys, seqs: p.seqs, accs: p.accs, vers: p.vers}
		if mark {
			n := len(p.keys)
			lo := 0
			if !full && since >= p.loSince {
				lo = int(min(p.lo, int32(n)))
			}
			if !p.fired && !quiet(p) || n-lo <= n/2 {
				// Copy what the capture reads now: the pane will
				// change, an open one at once (a copy on write would
				// copy the whole of its arrays, not just the windows
				// that changed). An open pane that got no record
				// since its last capture (a slice or window whose
				// time has passed, in a full capture) is shared
				// instead: most never change again before they fire,
				// and copying them all at a full checkpoint stalled
				// Nexmark q5 for 62 ms.
				pc.off = lo
				sp := s.spares()
				pc.accs = append(takeSpare(sp, &sp.accs, n-lo), p.accs[lo:n]...)
				if len(p.vers) > 0 {
					pc.vers = append(takeSpare(sp, &sp.vers, n-lo), p.vers[lo:n]...)
				}
				pc.copied = true
				if p.early != nil {
					pc.early = maps.Clone(p.early)
				}
			} else {
				p.shared = true
			}
			p.lo, p.loSince = int32(n), s.Epoch()
		}
		c.panes = append(c.panes, pc)
	}
	if mark {
		c.spare = s.spare // made by the first copy
	}
	// In ascending start, so that a snapshot's bytes do not depend on the
	// order of a map.
	perm := indexes(len(c.panes))
	sortIndexes(perm, func(a, b int32) int {
		wa, wb := c.panes[a].w, c.panes[b].w
		return cmp.Or(cmp.Compare(wa.Start, wb.Start), cmp.Compare(wa.End, wb.End))
	})
	sorted := make([]paneCapture[K, A], len(perm))
	for to, from := range perm {
		sorted[to] = c.panes[from]
	}
	c.panes = sorted
	return c
}

// Release gives the arrays the capture copied back to its state, for the
// next capture to copy into: made anew at each checkpoint, the copies of
// Nexmark q5's open panes (5 MiB) were fresh memory that the runtime had
// returned to the operating system since the last one, and the kernel
// faulted in again. The capture must not be used after it; Release may
// be called on any goroutine, once Encode is done.
func (c *WindowCapture[K, A]) Release() {
	if c.spare == nil {
		return
	}
	for i := range c.panes {
		p := &c.panes[i]
		if p.copied {
			c.spare.give(p.accs, p.vers)
			p.accs, p.vers, p.copied = nil, nil, false
		}
	}
	c.spare = nil
}

// captureSpares are the arrays of a state's encoded captures, which its
// next capture copies into: the captures are taken on the state's
// goroutine and released on the checkpoint writer's.
type captureSpares[A any] struct {
	mu   sync.Mutex
	accs spareArrays[A]
	vers spareArrays[uint8]
	// clear is set when A holds pointers, which a spare array must not
	// keep alive.
	clear bool
}

// spares returns s's spare arrays, made on the first capture that copies.
func (s *WindowState[K, A]) spares() *captureSpares[A] {
	if s.spare == nil {
		s.spare = &captureSpares[A]{clear: s.accPointers}
	}
	return s.spare
}

// give keeps a released capture's arrays.
func (c *captureSpares[A]) give(accs []A, vers []uint8) {
	if c.clear {
		clear(accs)
	}
	c.mu.Lock()
	c.accs.put(accs)
	c.vers.put(vers)
	c.mu.Unlock()
}

// takeSpare returns an empty array with room for n elements: the
// smallest of c's spares a that has it, or a new one with an eighth more,
// so that it still has the room when the panes have grown by the next
// capture.
func takeSpare[T, A any](c *captureSpares[A], a *spareArrays[T], n int) []T {
	if n == 0 {
		return nil
	}
	c.mu.Lock()
	x := a.take(n)
	c.mu.Unlock()
	if x == nil {
		x = make([]T, 0, n+n/8)
	}
	return x
}

// spareArrays are arrays kept for reuse, at most maxSpares of them.
type spareArrays[T any] [][]T

// maxSpares is how many arrays of each kind a state keeps: a capture
// copies one per open pane that changes (five in Nexmark q5).
const maxSpares = 16

// take removes and returns the smallest spare with room for n elements,
// emptied, or nil.
func (a *spareArrays[T]) take(n int) []T {
	best := -1
	for i, x := range *a {
		if cap(x) >= n && (best < 0 || cap(x) < cap((*a)[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	x := (*a)[best][:0]
	*a = slices.Delete(*a, best, best+1)
	return x
}

// put keeps x, dropping the smallest array when there are too many.
func (a *spareArrays[T]) put(x []T) {
	if cap(x) == 0 {
		return
	}
	*a = append(*a, x[:0])
	if len(*a) > maxSpares {
		smallest := 0
		for i, y := range *a {
			if cap(y) < cap((*a)[smallest]) {
				smallest = i
			}
		}
		*a = slices.Delete(*a, smallest, smallest+1)
	}
}

// quiet reports whether pane p has not changed since it was last
// captured.
func quiet[K comparable, A any](p *pane[K, A]) bool {
	return p.loSince > 0 && !changedAfter(p.ver, p.loSince)
}

// changedAfter reports whether a pane whose latest change was in epoch
// v (pane.ver: low 32 bits; 0 for never) changed after epoch since:
// epochs are compared as serial numbers, so v is read right for 2^31
// epochs after it. Its windows' stamps are bytes (stampedAfter).
func changedAfter(v uint32, since uint64) bool {
	return v != 0 && int32(v-uint32(since)) > 0
}

// Encode writes the captured windows into the section of each one's key
// group, as SnapshotDelta would have written them at the barrier, in
// layoutPanes (windowformat.go): every section starts with the watermark
// and the next creation number, then, panes in ascending start, each
// pane's bounds and its windows of the section's key group in the pane's
// order.
func (c *WindowCapture[K, A]) Encode(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encA func(*codec.Writer, *A)) error {
	// Whether the sections were made without a size hint, before the
	// headers give them room.
	unsized := sectionsRoom(sec) == 0
	h := c.h
	h.layout = c.layout
	writeSectionHeaders(sec, h)
	if c.firedThrough != nil {
		// The keys of a key group came from one subtask: the section
		// says how far their windows fired.
		fired := make([]int64, len(sec.W))
		for i := range fired {
			fired[i] = MinTime
		}
		for k, ft := range c.firedThrough {
			if j := keyGroup(k) - sec.Start; uint(j) < uint(len(sec.W)) {
				fired[j] = max(fired[j], ft)
			}
		}
		for i := range sec.W {
			if fired[i] > h.wm {
				hi := h
				hi.fired, hi.hasFired = fired[i], true
				sec.W[i].Reset()
				writeSectionHeader(&sec.W[i], hi)
			}
		}
	}
	// Per section: the pane whose head it holds last (its index + 1),
	// and that pane's last creation number written.
	type cursor struct {
		pane int
		last uint64
	}
	cur := make([]cursor, len(sec.W))
	size := c.sizer(sec, unsized)
	written := 0
	for pi := range c.panes {
		p := &c.panes[pi]
		for i := p.off; i < len(p.keys); i++ {
			k := p.keys[i]
			if !c.full && !stampedAfter(p.vers[i-p.off], c.stampBase, c.since) {
				continue
			}
			if written == size.next {
				size.grow(sec, written)
			}
			written++
			j := keyGroup(k) - sec.Start
			if uint(j) >= uint(len(sec.W)) {
				_, err := keySection(sec, keyGroup, k)
				return err
			}
			w, at := &sec.W[j], &cur[j]
			// Room for the head, the pane's and most keys and
			// accumulators, so that their appends do not grow the buffer
			// by a quarter at a time (codec.Writer.Begin).
			w.Reserve(64)
			if at.pane != pi+1 {
				writePaneHead(w, p.w)
				at.pane, at.last = pi+1, 0
			}
			fired := p.fired
			if p.early != nil {
				fired = fired || p.early[int32(i)]
			}
			if c.layout == layoutSlicesMarked {
				_, fired = c.firedThrough[k] // the section's mark holds for k
			}
			seq := p.seqs.at(i)
			w.Uvarint(windowHead(seq, at.last, fired))
			at.last = seq
			encK(w, k)
			encA(w, &p.accs[i-p.off])
		}
	}
	return nil
}

// sectionSizer gives a capture's sections room for the windows that
// Encode has yet to write, at the bytes per window of those it wrote
// last. A state's first full file or delta has no size hint from an
// earlier one of its kind (NewSectionsSized), and its buffers, doubled
// window by window from nothing, allocated 2.7 times the file's size
// (Nexmark q5's first checkpoint, 5 MiB), each allocation fresh memory
// that the kernel faults in. The first estimate, from the first
// sizeSample windows, gets a quarter more room; the later ones, after
// four times as many windows each, an eighth: the bytes of a window
// change through a file when they do with the key (growing ids, in the
// order the windows were made), which the later estimates follow. The
// room goes to the sections that got windows since the last estimate,
// in equal shares: keys spread over the key groups by their hash, and a
// state with few keys (or few that are active) gives none to the key
// groups that have none of them.
type sectionSizer struct {
	total int   // the windows of the capture
	next  int   // the windows written at the next estimate; -1 for none
	at    int   // the windows written at the last estimate
	lens  []int // each section's bytes then
}

// sizeSample is how many windows a full capture's Encode writes before
// it sizes the sections for the rest.
const sizeSample = 4096

// sizer starts the sizing of sec's sections, if c is large enough for it
// and full, or a delta into sections made without a size hint (its
// state's first delta: unsized).
func (c *WindowCapture[K, A]) sizer(sec *state.Sections, unsized bool) sectionSizer {
	z := sectionSizer{next: -1}
	if len(sec.W) == 0 {
		return z
	}
	switch {
	case c.full:
		for pi := range c.panes {
			z.total += len(c.panes[pi].keys) - c.panes[pi].off
		}
	case unsized:
		// A delta writes the windows stamped after its base; counting
		// them is a pass over the stamps, cheaper than one more copy
		// of the sections.
		for pi := range c.panes {
			for _, v := range c.panes[pi].vers {
				if stampedAfter(v, c.stampBase, c.since) {
					z.total++
				}
			}
		}
	}
	if z.total >= 2*sizeSample {
		z.next = sizeSample
		z.lens = make([]int, len(sec.W))
		for i := range sec.W {
			z.lens[i] = sec.W[i].Len()
		}
	}
	return z
}

// grow makes the room of each section that got windows since the last
// estimate at least its share of the windows left to write, at the bytes
// per window since then.
func (z *sectionSizer) grow(sec *state.Sections, written int) {
	added, active := 0, 0
	for i := range sec.W {
		if d := sec.W[i].Len() - z.lens[i]; d > 0 {
			added += d
			active++
		}
	}
	perWindow := float64(added) / float64(written-z.at)
	per := int(perWindow * float64(z.total-written) / float64(max(active, 1)))
	more := per / 8
	if z.at == 0 {
		more = per / 4
	}
	for i := range sec.W {
		// Sections sized from the last file mostly have the room
		// already.
		w := &sec.W[i]
		if l := w.Len(); l > z.lens[i] && w.Room() < per {
			w.Grow(per + more + 64)
		}
		z.lens[i] = w.Len()
	}
	z.at, z.next = written, 4*written
}

// sectionsRoom is the bytes that fit in sec's sections before they grow.
func sectionsRoom(sec *state.Sections) int {
	n := 0
	for i := range sec.W {
		n += sec.W[i].Room()
	}
	return n
}

// writeWindowEntry writes one window of a key: a delta's operation first
// (put), then the key, the window's bounds, its creation number, whether
// it fired, and its accumulator.
func writeWindowEntry[K comparable, A any](w *codec.Writer, delta bool, k K, win Window, seq uint64, fired bool, acc *A, encK func(*codec.Writer, K), encA func(*codec.Writer, *A)) {
	m := w.Begin()
	if delta {
		w.Uvarint(deltaPut)
	}
	encK(w, k)
	w.Varint(win.Start)
	w.Varint(win.End)
	w.Uvarint(seq)
	w.Bool(fired)
	encA(w, acc)
	w.End(m)
}

// own gives p arrays of its own that it may change in place: a capture
// holds the ones it has (shared).
func (p *pane[K, A]) own() {
	// The copies get the keys' room: a new key appends to the arrays
	// without growing them again, which copied a pane of Nexmark q5
	// (300K windows) a second time right after this copy.
	p.accs = grown(p.accs, cap(p.keys))
	if len(p.vers) > 0 {
		p.vers = grown(p.vers, cap(p.keys))
	}
	if p.early != nil {
		p.early = maps.Clone(p.early)
	}
	p.shared = false
}

// grown returns a copy of x with room for at least c elements (and one
// more than it holds): append copies x into a new array (the capacity of
// x is cut to its length), clearing only the room after it, which make
// would clear whole before the copy.
func grown[T any](x []T, c int) []T {
	n := len(x)
	return append(x[:n:n], make([]T, max(c-n, 1))...)[:n]
}

// pointerFree reports whether a value of type t refers to nothing that
// can change in place, so that a copy of it is a snapshot: numbers,
// booleans, strings, and arrays and structs of them.
func pointerFree(t reflect.Type) bool { return !holdsPointers(t, false) }

// hasPointers reports whether a value of type t holds pointers that the
// garbage collector follows, strings included.
func hasPointers(t reflect.Type) bool { return holdsPointers(t, true) }

// holdsPointers reports whether a value of type t holds pointers; a
// string counts as one when strings is set.
func holdsPointers(t reflect.Type, strings bool) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.String:
		return strings
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem(), strings)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsPointers(t.Field(i).Type, strings) {
				return true
			}
		}
		return false
	}
	return true
}
