package pebblestate

import (
	"errors"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
)

// windowMeta is what the windows of a subtask's store (Windows, Sessions)
// keep beside them under metaWindows: the watermark and the next creation
// number, written at the barriers where they changed.
type windowMeta struct {
	wm  int64
	seq uint64
	// loaded is set once wm and seq are read from the store; restored once
	// a restore set the watermark (later ones can only lower it).
	loaded, restored bool
	written          [2]uint64 // wm and seq as the store holds them
	// counters, when set, reads the counters of the part that the
	// windows' accumulators belong to (WindowJoin), which a savepoint's
	// sections hold too.
	counters func(db kv.Reader) (arrival, group uint64, err error)
}

// header reads in db, a checkpoint of the store, what each section of
// the windows' savepoint file starts with: the watermark and the next
// creation number (MinTime and 0 before any was written), and the
// counters of the part the windows belong to (0 and 0 for none).
func (m *windowMeta) header(db kv.Reader) (wm int64, seq, arrival, group uint64, err error) {
	wm, seq, ok, err := readWindowMeta(db)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if !ok {
		wm, seq = eventtime.MinTime, 0
	}
	if m.counters != nil {
		arrival, group, err = m.counters(db)
	}
	return wm, seq, arrival, group, err
}

// load reads wm and seq from db, once; fail reports an error (the
// store's).
func (m *windowMeta) load(db kv.Store, fail func(string, error)) {
	if m.loaded {
		return
	}
	m.loaded = true
	wm, seq, ok, err := readWindowMeta(db)
	if err != nil {
		fail("read", err)
	}
	if ok {
		m.wm, m.seq = wm, seq
	}
	m.written = [2]uint64{uint64(m.wm), m.seq}
}

// barrier writes the watermark and the next creation number, when they
// changed.
func (m *windowMeta) barrier(db kv.Store, fail func(string, error)) {
	if !m.loaded || m.written == [2]uint64{uint64(m.wm), m.seq} {
		return
	}
	m.write(db, fail)
}

func (m *windowMeta) write(db kv.Store, fail func(string, error)) {
	var w codec.Writer
	w.Varint(m.wm)
	w.Uvarint(m.seq)
	if err := db.Set(metaWindows, w.Bytes()); err != nil {
		fail("write", err)
	}
	m.written = [2]uint64{uint64(m.wm), m.seq}
}

// copyFrom merges the watermark and the next creation number of an old
// store (the windows and their timers are copied with the key-group
// ranges): the lowest watermark, the highest number.
func (m *windowMeta) copyFrom(db, old kv.Store, fail func(string, error)) {
	m.load(db, fail)
	wm, seq, ok, err := readWindowMeta(old)
	if err != nil {
		fail("restore", err)
	}
	if ok {
		m.restoredHeader(wm, seq)
	}
	m.write(db, fail)
}

// restoredHeader merges a restored watermark and creation number.
func (m *windowMeta) restoredHeader(wm int64, seq uint64) {
	if !m.restored {
		m.wm = wm
	} else {
		m.wm = min(m.wm, wm)
	}
	m.restored = true
	m.seq = max(m.seq, seq)
}

// readWindowMeta reads the watermark and the next creation number in db.
func readWindowMeta(db kv.Reader) (wm int64, seq uint64, ok bool, err error) {
	v, closer, err := db.Get(metaWindows)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	defer closer.Close()
	r := codec.NewReader(v)
	wm, seq = r.Varint(), r.Uvarint()
	if err := r.Err(); err != nil {
		return 0, 0, false, err
	}
	return wm, seq, true, nil
}
