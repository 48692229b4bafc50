package eventtime

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
)

// The windows of a key group in a checkpoint (WindowState.Snapshot): a
// header with the watermark and the next creation number, then per key
// and window the key, the window's bounds, its creation number, whether
// it fired, and its accumulator, in one of two layouts (layoutEntries,
// layoutPanes, below). Savepoints hold them in this form whichever the
// backend: the backend that keeps windows elsewhere (pebblestate) writes
// the entries' layout with these, and reads both.

// WriteWindowHeader starts the section of windows of one key group.
func WriteWindowHeader(w *codec.Writer, wm int64, seq uint64) {
	writeSectionHeader(w, sectionHeader{wm: wm, seq: seq})
}

// WriteWindow adds a key's window to a section: key and acc hold the key
// and the accumulator as the generated serializers wrote them.
func WriteWindow(w *codec.Writer, key []byte, win Window, seq uint64, fired bool, acc []byte) {
	m := w.Begin()
	w.Raw(key)
	w.Varint(win.Start)
	w.Varint(win.End)
	w.Uvarint(seq)
	w.Bool(fired)
	w.Raw(acc)
	w.End(m)
}

// ReadWindows reads a section of windows, in either layout: it calls
// window for each (acc nil when the accumulator was not written), and
// returns the header's watermark and next creation number; ok is false
// for an empty section (no header). decK and decA must read all of what
// the serializers wrote: in layoutPanes the next window follows.
func ReadWindows[K, A any](section []byte, decK func(*codec.Reader) K, decA func(*codec.Reader) *A, window func(k K, w Window, seq uint64, fired bool, acc *A) error) (wm int64, seq uint64, ok bool, err error) {
	r := codec.NewReader(section)
	h, ok := readSectionHeader(r)
	if !ok {
		return 0, 0, false, r.Err()
	}
	if h.slices() {
		return 0, 0, false, errSlices
	}
	if err := readWindows(r, h, false, decK, decA, window); err != nil {
		return 0, 0, false, err
	}
	return h.wm, h.seq, true, nil
}

// The layouts of the windows after a section's header (its field 5).
//
// layoutEntries, the first (no field 5; WriteWindow, pebblestate's and
// sessions' form), is one nested entry per window: a delta's operation
// first (deltaPut), then the key, the window's bounds, its creation
// number, whether it fired, and the accumulator.
//
// layoutPanes (WindowCapture.Encode: tumbling and sliding windows of the
// memory backend) writes a pane's bounds once for its windows in the
// section: nearly every window of Nexmark q5 is in a checkpoint, and the
// bounds and the nesting were more than half of an entry's 21 bytes. It
// is a sequence of items, each a uvarint head:
//
//   - 0: a pane, put (full files and deltas alike): its start and end
//     (varints). The windows after it, up to the next pane, are its; a
//     pane has at least one (a section cut after a pane's head is
//     corrupt).
//   - odd: a window of the last pane: head>>1&1 says whether it fired,
//     head>>2 is the difference of its creation number from the last
//     window's of the pane (the first's from 0), zigzag-encoded, as a
//     pane's windows are in creation order but for restored ones; then
//     the key and the accumulator, as the generated serializers write
//     them (each reads back exactly what it wrote).
//
// Other even heads are operations a later version may add: this one
// refuses them. A program older than layoutPanes reads field 5 as an
// unknown header field and then fails on the first pane.
//
// layoutSlices is layoutPanes of sliding windows kept in slices
// (windowslices.go): a pane of the slide's width is a slice, a pane of the
// window's size a window restored whole. Only checkpoints hold it;
// savepoints hold the windows whole (layoutPanes). The header's fired
// (field 6), when set, says how far the windows of every key of the
// section fired (slicing.firedThrough).
//
// layoutSlicesMarked is layoutSlices written while some keys' windows
// are marked as fired through a watermark after a change of parallelism:
// the header's fired holds for the keys whose windows have the fired bit
// set (otherwise unused: slices never fire as panes, and a window kept
// whole goes when it fires), not for the others. A key that came after
// the restore has no mark, and its slices count in every window; given
// its section's mark by a restore, they no longer counted in the windows
// ending before it, and a checkpoint taken before the watermark passed
// the marks lost those windows' records since the restore.
const (
	layoutEntries      = 0
	layoutPanes        = 1
	layoutSlices       = 2
	layoutSlicesMarked = 3
)

// slices reports whether the windows after header h are kept in slices
// (layoutSlices, layoutSlicesMarked).
func (h sectionHeader) slices() bool {
	return h.layout == layoutSlices || h.layout == layoutSlicesMarked
}

// markHolds reports whether the header's mark of how far its keys'
// windows fired (fired) holds for the key of a window whose head had
// the fired bit firedBit: for every key but in layoutSlicesMarked.
func (h sectionHeader) markHolds(firedBit bool) bool {
	return h.layout != layoutSlicesMarked || firedBit
}

// errSlices is what a reader of windows that has no merge function finds
// in a checkpoint of windows kept in slices.
var errSlices = fmt.Errorf("%w: the windows are kept in slices (sliding windows with a merge function, checkpointed by the memory backend), which this program cannot read: resume from a savepoint, which holds them whole", codec.ErrCorrupt)

// readWindows reads the windows after a section's header h in r, in
// either layout, and calls window for each; delta says the section is a
// delta's (its entries of layoutEntries start with their operation).
func readWindows[K, A any](r *codec.Reader, h sectionHeader, delta bool, decK func(*codec.Reader) K, decA func(*codec.Reader) *A, window func(k K, w Window, seq uint64, fired bool, acc *A) error) error {
	switch h.layout {
	case layoutEntries:
		for r.More() {
			er := r.Nested()
			if delta {
				if op := er.Uvarint(); op != deltaPut {
					er.Fail("unknown operation %d", op)
				}
			}
			k, w, s, fired, a := readWindow(er, decK, decA)
			if err := er.Err(); err != nil {
				return err
			}
			if err := window(k, w, s, fired, a); err != nil {
				return err
			}
		}
	case layoutPanes, layoutSlices, layoutSlicesMarked:
		var w Window
		var pane, empty bool
		var last uint64
		for r.More() {
			head := r.Uvarint()
			switch {
			case head == 0:
				if empty {
					r.Fail("pane %v without windows", w)
				}
				w.Start = r.Varint()
				w.End = r.Varint()
				pane, empty, last = true, true, 0
			case head&1 == 0:
				r.Fail("unknown operation %d in a section of windows: written by a later version of pipegen?", head/2)
			case !pane:
				r.Fail("a window before the first pane")
			default:
				z := head >> 2
				seq := last + uint64(int64(z>>1)^-int64(z&1))
				last = seq
				empty = false
				k := decK(r)
				a := decA(r)
				if err := r.Err(); err != nil {
					return err
				}
				if err := window(k, w, seq, head&2 != 0, a); err != nil {
					return err
				}
			}
		}
		if empty {
			r.Fail("pane %v without windows", w)
		}
	default:
		return fmt.Errorf("%w: windows in layout %d, which this version of pipegen does not know: written by a later one?", codec.ErrCorrupt, h.layout)
	}
	return r.Err()
}

// writePaneHead starts the windows of pane w in a section of layoutPanes.
func writePaneHead(cw *codec.Writer, w Window) {
	cw.Uvarint(0)
	cw.Varint(w.Start)
	cw.Varint(w.End)
}

// windowHead is the head of a window of layoutPanes: seq is its creation
// number, last the one of the window before it in its pane (0 for the
// first).
func windowHead(seq, last uint64, fired bool) uint64 {
	d := int64(seq - last)
	h := (uint64(d<<1)^uint64(d>>63))<<2 | 1
	if fired {
		h |= 2
	}
	return h
}

// AddSat is a + b, saturated at MinTime and MaxTime: a window's cleanup
// time is AddSat(its MaxTimestamp, the allowed lateness).
func AddSat(a, b int64) int64 { return addSat(a, b) }

// readWindow decodes one window of a section: its key, bounds, creation
// number, whether it fired, and its accumulator (nil when not written).
func readWindow[K, A any](er *codec.Reader, decK func(*codec.Reader) K, decA func(*codec.Reader) *A) (k K, w Window, seq uint64, fired bool, acc *A) {
	k = decK(er)
	w.Start = er.Varint()
	w.End = er.Varint()
	seq = er.Uvarint()
	fired = er.Bool()
	return k, w, seq, fired, decA(er)
}
