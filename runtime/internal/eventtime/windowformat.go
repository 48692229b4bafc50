package eventtime

import "github.com/pipegen/pipegen/runtime/codec"

// The windows of a key group in a checkpoint (WindowState.Snapshot): a
// header with the watermark and the next creation number, then one
// nested entry per key and window: the key, the window's bounds, its
// creation number, whether it fired, and its accumulator. Savepoints
// hold them in this form whichever the backend: the backend that keeps
// windows elsewhere (pebblestate) writes and reads it with these.

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

// ReadWindows reads a section of windows: it calls window for each (acc
// nil when the accumulator was not written), and returns the header's
// watermark and next creation number; ok is false for an empty section
// (no header).
func ReadWindows[K, A any](section []byte, decK func(*codec.Reader) K, decA func(*codec.Reader) *A, window func(k K, w Window, seq uint64, fired bool, acc *A) error) (wm int64, seq uint64, ok bool, err error) {
	r := codec.NewReader(section)
	h, ok := readSectionHeader(r)
	if !ok {
		return 0, 0, false, r.Err()
	}
	for r.More() {
		er := r.Nested()
		k, w, s, fired, a := readWindow(er, decK, decA)
		if err := er.Err(); err != nil {
			return 0, 0, false, err
		}
		if err := window(k, w, s, fired, a); err != nil {
			return 0, 0, false, err
		}
	}
	return h.wm, h.seq, true, r.Err()
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
