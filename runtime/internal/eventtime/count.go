package eventtime

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

// CountWindows is the state of one subtask of a keyed reduce or aggregate
// on count windows (Flink's countWindow): windows of a key's records by
// their number in arrival order, not by time.
//
// Tumbling (every == size): the 1st to size-th record of a key form a
// window, the next size the next one; a window fires as its last record
// arrives. Sliding (every < size): every every-th record of a key, a
// window of its last size records fires (fewer, while the key has not
// had size records yet, as in Flink). A window that is not complete when
// the input ends never fires. A result's event time is the time of the
// record that completed its window, and no record is late.
type CountWindows[K comparable, T, A any] struct {
	size, every uint64
	keys        map[K]*countKey[T, A]
	add         func(acc *A, r T)
	emit        func(k K, acc *A, ts int64)
}

// countKey is one key's open window: the records since it last fired,
// the accumulator of a tumbling window, the last size records of a
// sliding one.
type countKey[T, A any] struct {
	n    uint64
	acc  A
	recs []Timed[T]
}

// NewCountWindows returns empty count windows of size records, one every
// every records (every == size: tumbling). add folds a record into an
// accumulator; emit gets every result (acc is valid only during the
// call). It panics on a size or slide that is zero or every > size: the
// compiler checks them.
func NewCountWindows[K comparable, T, A any](size, every uint64, add func(acc *A, r T), emit func(k K, acc *A, ts int64)) *CountWindows[K, T, A] {
	if size == 0 || every == 0 || every > size {
		panic(fmt.Sprintf("count windows of %d records every %d", size, every))
	}
	return &CountWindows[K, T, A]{size: size, every: every, keys: make(map[K]*countKey[T, A]), add: add, emit: emit}
}

// Len is the number of keys with an open window.
func (c *CountWindows[K, T, A]) Len() int { return len(c.keys) }

func (c *CountWindows[K, T, A]) sliding() bool { return c.every < c.size }

// Add adds record r of key k at time ts, firing its window when r
// completes it.
func (c *CountWindows[K, T, A]) Add(k K, r T, ts int64) {
	ks := c.keys[k]
	if ks == nil {
		ks = &countKey[T, A]{}
		c.keys[k] = ks
	}
	ks.n++
	if !c.sliding() {
		c.add(&ks.acc, r)
		if ks.n == c.size {
			c.emit(k, &ks.acc, ts)
			delete(c.keys, k)
		}
		return
	}
	if uint64(len(ks.recs)) == c.size {
		ks.recs = dropFront(ks.recs, 1)
	}
	ks.recs = append(ks.recs, Timed[T]{TS: ts, V: r})
	if ks.n == c.every {
		ks.n = 0
		var acc A
		for i := range ks.recs {
			c.add(&acc, ks.recs[i].V)
		}
		c.emit(k, &acc, ts)
	}
}

// Snapshot writes every key's open window into the section of its key
// group: the key (encK), the records since the last firing, then the
// accumulator (encA) of a tumbling window or the last records (time and
// encT) of a sliding one.
func (c *CountWindows[K, T, A]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encA func(*codec.Writer, *A), encT func(*codec.Writer, *T)) error {
	writeSectionHeaders(sec, sectionHeader{wm: MinTime})
	for k, ks := range c.keys {
		w, err := keySection(sec, keyGroup, k)
		if err != nil {
			return err
		}
		m := w.Begin()
		encK(w, k)
		w.Uvarint(ks.n)
		if c.sliding() {
			writeTimed(w, ks.recs, encT)
		} else {
			encA(w, &ks.acc)
		}
		w.End(m)
	}
	return nil
}

// Restore adds the open windows of one key group's section to windows
// that hold none of its keys.
func (c *CountWindows[K, T, A]) Restore(section []byte, decK func(*codec.Reader) K, decA func(*codec.Reader) *A, decT func(*codec.Reader) *T) error {
	r := codec.NewReader(section)
	if _, ok := readSectionHeader(r); !ok {
		return r.Err()
	}
	for r.More() {
		kr := r.Nested()
		k := decK(kr)
		ks := &countKey[T, A]{n: kr.Uvarint()}
		if c.sliding() {
			ks.recs = readTimed(kr, decT, false)
		} else if a := decA(kr); a != nil {
			ks.acc = *a
		}
		if r.Err() != nil {
			break
		}
		if _, dup := c.keys[k]; dup {
			return fmt.Errorf("%w: key %v restored twice", codec.ErrCorrupt, k)
		}
		if ks.n >= c.every || uint64(len(ks.recs)) > c.size {
			return fmt.Errorf("%w: count window of key %v holds %d records since it fired (windows of %d every %d now: the window changed)", codec.ErrCorrupt, k, ks.n, c.size, c.every)
		}
		c.keys[k] = ks
	}
	return r.Err()
}
