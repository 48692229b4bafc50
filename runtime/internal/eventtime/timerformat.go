package eventtime

import "github.com/pipegen/pipegen/runtime/codec"

// Timers is what a process operator's context needs of its timers: the
// memory backend's TimerService, or the pebble backend's timers in the
// subtask's store (package pebblestate).
type Timers[K comparable] interface {
	// Register sets a timer of k at time at, in processing time or in
	// event time; registering one that exists does nothing.
	Register(k K, at int64, processing bool)
	// Delete removes the timer of k at time at, if there is one.
	Delete(k K, at int64, processing bool)
}

var _ Timers[string] = (*TimerService[string])(nil)

// The timers of a key group in a checkpoint (TimerService.Snapshot): a
// header with the subtask's next registration number, then one nested
// entry per timer, the key, its time, its domain and its registration
// number. Savepoints hold them in this form whichever the backend, so
// that the backend that keeps timers elsewhere (pebblestate) writes and
// reads it with these.

// WriteTimerHeader starts the section of timers of one key group; seq is
// the next registration number.
func WriteTimerHeader(w *codec.Writer, seq uint64) {
	writeSectionHeader(w, sectionHeader{wm: MinTime, seq: seq})
}

// WriteTimer adds a timer to a section: key holds the key as the
// generated serializer wrote it.
func WriteTimer(w *codec.Writer, key []byte, at int64, processing bool, seq uint64) {
	m := w.Begin()
	w.Raw(key)
	w.Varint(at)
	w.Bool(processing)
	w.Uvarint(seq)
	w.End(m)
}

// ReadTimers reads a section of timers: it calls timer for each, with
// its key decoded by decK, and returns the next registration number of
// the section's header.
func ReadTimers[K any](section []byte, decK func(*codec.Reader) K, timer func(k K, at int64, processing bool, seq uint64) error) (seq uint64, err error) {
	return ReadTimerChanges(section, false, decK, func(_ bool, k K, at int64, processing bool, seq uint64) error {
		return timer(k, at, processing, seq)
	})
}

// ReadTimerChanges reads a section of timers of a full file, or of a
// delta (delta set; TimerService.SnapshotDelta): it calls timer for each
// entry, del set for a timer deleted since the file before, and returns
// the next registration number of the section's header.
func ReadTimerChanges[K any](section []byte, delta bool, decK func(*codec.Reader) K, timer func(del bool, k K, at int64, processing bool, seq uint64) error) (seq uint64, err error) {
	r := codec.NewReader(section)
	h, ok := readSectionHeader(r)
	if !ok {
		return 0, r.Err()
	}
	for r.More() {
		tr := r.Nested()
		op := uint64(deltaPut)
		if delta {
			op = tr.Uvarint()
		}
		k := decK(tr)
		at, processing, seq := tr.Varint(), tr.Bool(), tr.Uvarint()
		if op != deltaPut && op != deltaDelete {
			tr.Fail("unknown operation %d", op)
		}
		if err := tr.Err(); err != nil {
			return 0, err
		}
		if err := timer(op == deltaDelete, k, at, processing, seq); err != nil {
			return 0, err
		}
	}
	return h.seq, r.Err()
}
