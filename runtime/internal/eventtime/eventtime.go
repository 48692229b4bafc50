// Package eventtime holds the event-time engines that generated operators
// drive: window state (tumbling, sliding, session), interval and window
// joins, timers, the context of process operators, and the watermark
// generators of sources. Each engine snapshots itself into key-group
// sections and restores from them.
package eventtime

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/stream"
	"github.com/pipegen/pipegen/runtime/state"
)

// Event time is int64 milliseconds since the Unix epoch. The engines in
// window.go, timers.go and join.go follow Flink's watermark semantics:
//
//   - a watermark W says that no more records with a timestamp <= W are
//     expected;
//   - a window [Start, End) holds the records with Start <= TS < End; its
//     MaxTimestamp is End-1, and it fires once the watermark reaches
//     MaxTimestamp;
//   - a window is late for a record (the record goes to the side output)
//     once MaxTimestamp + allowed lateness <= the watermark.
//
// For deterministic replay, the lateness of a record is judged against the
// watermark of the input the record came from (the caller passes it as
// inputWatermark), while windows fire on the operator's combined watermark,
// the minimum over its inputs (passed to Advance). An engine judges against
// the larger of the two, which is the input's watermark whenever the caller
// keeps the combined watermark the minimum of the inputs'. All arithmetic on
// times saturates at MinTime and MaxTime instead of wrapping around.

// The bounds of event time, as the data plane carries it (see package
// stream).
const (
	MinTime = stream.MinTime
	MaxTime = stream.MaxTime
)

// Timed is a record with its event time.
type Timed[T any] = stream.Timed[T]

//
// Every engine is deterministic: the same sequence of calls gives the same
// emissions in the same order, and an engine restored from a snapshot
// behaves from then on exactly as the one that took it. Callbacks must not
// call back into the engine that calls them, except where noted
// (TimerService's fire may register and delete timers).

// Window is the time interval [Start, End), in milliseconds.
type Window struct {
	Start, End int64
}

// MaxTimestamp is the largest timestamp in the window, End-1: the window
// fires when the watermark reaches it.
func (w Window) MaxTimestamp() int64 { return w.End - 1 }

// Contains reports whether ts is in the window.
func (w Window) Contains(ts int64) bool { return w.Start <= ts && ts < w.End }

func (w Window) String() string { return fmt.Sprintf("[%d, %d)", w.Start, w.End) }

// WindowKind is the shape of windows a WindowAssigner makes.
type WindowKind uint8

// The window kinds.
const (
	Tumbling WindowKind = iota // fixed Size, back to back
	Sliding                    // fixed Size, one starting every Slide
	Session                    // [ts, ts+Gap) per record, merged while they touch or overlap
)

func (k WindowKind) String() string {
	switch k {
	case Tumbling:
		return "tumbling"
	case Sliding:
		return "sliding"
	case Session:
		return "session"
	}
	return fmt.Sprintf("WindowKind(%d)", uint8(k))
}

// WindowAssigner says which windows a timestamp belongs to. Tumbling and
// sliding windows are aligned to the epoch: a window starts at every
// multiple of Slide (of Size, for tumbling windows), negative times
// included.
type WindowAssigner struct {
	Kind  WindowKind
	Size  int64 // tumbling and sliding
	Slide int64 // sliding
	Gap   int64 // session
	// DynamicGap makes sessions take their gap from each record (Flink's
	// DynamicEventTimeSessionWindows): WindowState.AddGap; Gap is unused.
	DynamicGap bool
}

// Validate reports a size, slide or gap that is not positive.
func (a WindowAssigner) Validate() error {
	switch a.Kind {
	case Tumbling:
		if a.Size <= 0 {
			return fmt.Errorf("tumbling window size must be positive, got %dms", a.Size)
		}
	case Sliding:
		if a.Size <= 0 {
			return fmt.Errorf("sliding window size must be positive, got %dms", a.Size)
		}
		if a.Slide <= 0 {
			return fmt.Errorf("sliding window slide must be positive, got %dms", a.Slide)
		}
	case Session:
		if a.Gap <= 0 && !a.DynamicGap {
			return fmt.Errorf("session window gap must be positive, got %dms", a.Gap)
		}
	default:
		return fmt.Errorf("unknown window kind %d", uint8(a.Kind))
	}
	return nil
}

// Assign appends to buf[:0] the windows that ts belongs to and returns
// the result. Tumbling: the one window of Size containing ts. Sliding:
// every window of Size starting at a multiple of Slide that contains ts,
// in ascending Start; none when ts falls between windows (Slide > Size).
// Session: [ts, ts+Gap), which merges with the key's other sessions.
func (a WindowAssigner) Assign(ts int64, buf []Window) []Window {
	buf = buf[:0]
	if ts == MaxTime {
		ts = MaxTime - 1
	}
	switch a.Kind {
	case Tumbling:
		return append(buf, a.tumbling(ts))
	case Sliding:
		// The latest window containing ts starts at the last multiple of
		// Slide at or before ts; earlier ones every Slide before it, as
		// long as they still reach ts.
		for s := floorMultiple(ts, a.Slide); addSat(s, a.Size) > ts; s -= a.Slide {
			buf = append(buf, Window{s, addSat(s, a.Size)})
			if s < MinTime+a.Slide {
				break
			}
		}
		for i, j := 0, len(buf)-1; i < j; i, j = i+1, j-1 {
			buf[i], buf[j] = buf[j], buf[i]
		}
		return buf
	case Session:
		return append(buf, Window{ts, addSat(ts, a.Gap)})
	}
	return buf
}

// tumbling is the tumbling window of a record at ts (Assign's only one).
func (a WindowAssigner) tumbling(ts int64) Window {
	if ts == MaxTime {
		ts = MaxTime - 1
	}
	s := floorMultiple(ts, a.Size)
	return Window{s, addSat(s, a.Size)}
}

// floorMultiple is the largest multiple of n at or below ts (floor
// division, also for negative ts), or MinTime when that is out of range.
func floorMultiple(ts, n int64) int64 {
	r := ts % n
	if r < 0 {
		r += n
	}
	if ts < MinTime+r {
		return MinTime
	}
	return ts - r
}

// addSat is a+b, saturated at MinTime and MaxTime.
func addSat(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		if b > 0 {
			return MaxTime
		}
		return MinTime
	}
	return c
}

// subSat is a-b, saturated at MinTime and MaxTime.
func subSat(a, b int64) int64 {
	if b == MinTime {
		if a >= 0 {
			return MaxTime
		}
		return a + MaxTime + 1
	}
	return addSat(a, -b)
}

// heapSlot is what an element of a timeHeap carries: its time, a sequence
// number that orders equal times, and its position in the heap.
type heapSlot struct {
	at  int64
	seq uint64
	hi  int // index in the heap, -1 outside it
}

func (s *heapSlot) slot() *heapSlot { return s }

// timeHeap is a min-heap ordered by (at, seq) whose elements know their
// index, so that one can be moved or removed in O(log n).
type timeHeap[E interface{ slot() *heapSlot }] []E

func (h timeHeap[E]) less(i, j int) bool {
	a, b := h[i].slot(), h[j].slot()
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (h timeHeap[E]) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot().hi = i
	h[j].slot().hi = j
}

func (h timeHeap[E]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h timeHeap[E]) down(i int) bool {
	i0 := i
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		c := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > i0
}

func (h *timeHeap[E]) push(e E) {
	e.slot().hi = len(*h)
	*h = append(*h, e)
	h.up(len(*h) - 1)
}

// fix restores the order after the element at i changed its time.
func (h timeHeap[E]) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// remove takes out the element at i.
func (h *timeHeap[E]) remove(i int) E {
	old := *h
	n := len(old) - 1
	if i != n {
		old.swap(i, n)
	}
	e := old[n]
	var zero E
	old[n] = zero
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	e.slot().hi = -1
	return e
}

// The snapshot of an engine is written per key group, like state.Memory's:
// every section starts with a header (the engine's watermark and counters,
// in tagged fields so that later versions can add some), followed by one
// length-delimited entry per key.

// sectionHeader is what an engine keeps beside its keyed contents.
type sectionHeader struct {
	wm    int64  // field 1: the combined watermark of the last Advance
	seq   uint64 // field 2: the next sequence number
	seq2  uint64 // field 3: a second counter (a window join's next arrival)
	group uint64 // field 4: a third counter (a window join's next emission group)
	// field 5: the layout of a section of windows after the header:
	// layoutEntries (absent) or layoutPanes (windowformat.go).
	layout uint64
	// field 6: of sliding windows kept in slices, the watermark through
	// which the windows of the section's keys fired before a change of
	// parallelism, when it is ahead of wm (windowslices.go,
	// firedThrough); MinTime when absent. It is written only when
	// hasFired is set: a header made without it (fired 0) and a
	// watermark still MinTime wrote a mark of 0, which a restore gave to
	// every key, whose windows ending at or before 0 then never fired.
	fired    int64
	hasFired bool
}

func writeSectionHeaders(sec *state.Sections, h sectionHeader) {
	for i := range sec.W {
		writeSectionHeader(&sec.W[i], h)
	}
}

// writeSectionHeader writes the header of one section.
func writeSectionHeader(w *codec.Writer, h sectionHeader) {
	m := w.Begin()
	w.Tag(1, codec.Varint)
	w.Varint(h.wm)
	if h.seq != 0 {
		w.Tag(2, codec.Varint)
		w.Uvarint(h.seq)
	}
	if h.seq2 != 0 {
		w.Tag(3, codec.Varint)
		w.Uvarint(h.seq2)
	}
	if h.group != 0 {
		w.Tag(4, codec.Varint)
		w.Uvarint(h.group)
	}
	if h.layout != 0 {
		w.Tag(5, codec.Varint)
		w.Uvarint(h.layout)
	}
	if h.hasFired && h.fired > h.wm {
		w.Tag(6, codec.Varint)
		w.Varint(h.fired)
	}
	w.End(m)
}

// readSectionHeader reads the header a section starts with; ok is false
// for an empty section.
func readSectionHeader(r *codec.Reader) (h sectionHeader, ok bool) {
	if !r.More() {
		return h, false
	}
	hr := r.Nested()
	h.wm, h.fired = MinTime, MinTime
	for hr.More() {
		id, wt := hr.Tag()
		switch id {
		case 1:
			if hr.Want(id, wt, codec.Varint) {
				h.wm = hr.Varint()
			}
		case 2:
			if hr.Want(id, wt, codec.Varint) {
				h.seq = hr.Uvarint()
			}
		case 3:
			if hr.Want(id, wt, codec.Varint) {
				h.seq2 = hr.Uvarint()
			}
		case 4:
			if hr.Want(id, wt, codec.Varint) {
				h.group = hr.Uvarint()
			}
		case 5:
			if hr.Want(id, wt, codec.Varint) {
				h.layout = hr.Uvarint()
			}
		case 6:
			if hr.Want(id, wt, codec.Varint) {
				h.fired = hr.Varint()
			}
		default:
			hr.Skip(wt)
		}
	}
	return h, r.Err() == nil
}

// keySection returns the writer of the section of k's key group.
func keySection[K comparable](sec *state.Sections, keyGroup func(K) int, k K) (*codec.Writer, error) {
	kg := keyGroup(k)
	i := kg - sec.Start
	if i < 0 || i >= len(sec.W) {
		return nil, fmt.Errorf("key %v is in key group %d, outside this subtask's range [%d, %d)", k, kg, sec.Start, sec.Start+len(sec.W))
	}
	return &sec.W[i], nil
}

// restoredWatermark merges the watermark of one more restored section into
// an engine's: the first one sets it, later ones can only lower it (after
// a change of parallelism, an engine may get the key groups of subtasks
// that had different watermarks; windows and timers keep their own record
// of having fired).
func restoredWatermark(cur int64, first bool, h int64) int64 {
	if first {
		return h
	}
	return min(cur, h)
}
