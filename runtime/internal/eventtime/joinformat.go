package eventtime

import "github.com/pipegen/pipegen/runtime/codec"

// The buffered records of an interval join in one key group of a
// checkpoint (IntervalJoin.Snapshot): a header with the watermark, then
// one nested entry per key: the key, the count of its left records, each
// nested with its time and value, then the same of its right records,
// each side in ascending time, equal times in arrival order. Savepoints
// hold them in this form whichever the backend: the backend that keeps
// join buffers elsewhere (pebblestate) writes and reads it with these.

// TimedBytes is a buffered record as the generated serializer wrote it.
type TimedBytes struct {
	TS int64
	V  []byte
}

// WriteIntervalJoinHeader starts the section of an interval join's
// records of one key group.
func WriteIntervalJoinHeader(w *codec.Writer, wm int64) {
	writeSectionHeader(w, sectionHeader{wm: wm})
}

// WriteIntervalJoinKey adds a key's buffered records to a section: key
// holds the key as the generated serializer wrote it.
func WriteIntervalJoinKey(w *codec.Writer, key []byte, left, right []TimedBytes) {
	m := w.Begin()
	w.Raw(key)
	for _, side := range [][]TimedBytes{left, right} {
		w.Uvarint(uint64(len(side)))
		for _, t := range side {
			rm := w.Begin()
			w.Varint(t.TS)
			w.Raw(t.V)
			w.End(rm)
		}
	}
	w.End(m)
}

// ReadIntervalJoin reads a section of an interval join's records: it
// calls key for each key with its records (in the order the section holds
// them), and returns the header's watermark; ok is false for an empty
// section (no header).
func ReadIntervalJoin[K, L, R any](section []byte, decK func(*codec.Reader) K, decL func(*codec.Reader) *L, decR func(*codec.Reader) *R, key func(k K, left []Timed[L], right []Timed[R]) error) (wm int64, ok bool, err error) {
	r := codec.NewReader(section)
	h, ok := readSectionHeader(r)
	if !ok {
		return 0, false, r.Err()
	}
	for r.More() {
		kr := r.Nested()
		k := decK(kr)
		left := readTimed(kr, decL, true)
		right := readTimed(kr, decR, true)
		if err := r.Err(); err != nil {
			return 0, false, err
		}
		if err := key(k, left, right); err != nil {
			return 0, false, err
		}
	}
	return h.wm, true, r.Err()
}

// SubSat is a - b, saturated at MinTime and MaxTime: when a right record
// at ts can no longer be joined is SubSat(ts, lower).
func SubSat(a, b int64) int64 { return subSat(a, b) }

// The windows of a window join in a key group of a checkpoint
// (WindowJoin.Snapshot) are in the form of WindowState's (WriteWindow),
// with two more counters in the header: the next arrival number and the
// next emission group. Each window's accumulator is its left records,
// then its right ones, each side a count and then, per record, nested:
// its arrival number, the emission group that paired it last (0: none
// yet), and the record.

// WriteWindowJoinHeader starts the section of a window join's windows of
// one key group; with arrival and group 0 it is WriteWindowHeader's.
func WriteWindowJoinHeader(w *codec.Writer, wm int64, seq, arrival, group uint64) {
	writeSectionHeader(w, sectionHeader{wm: wm, seq: seq, seq2: arrival, group: group})
}

// ReadWindowJoinHeader reads the counters of a window join's section:
// the next arrival number and the next emission group; ok is false for
// an empty section.
func ReadWindowJoinHeader(section []byte) (arrival, group uint64, ok bool, err error) {
	r := codec.NewReader(section)
	h, ok := readSectionHeader(r)
	return h.seq2, h.group, ok, r.Err()
}
