package pebblestate

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
)

// CountWindows are the open count windows of one subtask of a keyed
// reduce or aggregate on the pebble backend, with the semantics of
// eventtime.CountWindows (which the memory backend uses): per key one
// value of the subtask's store (a Keyed, with its cache of decoded
// values), the records since the key's window last fired and the
// accumulator of a tumbling window or the last records of a sliding one.
// Count windows have no time: no timers, no watermark. A key's value is
// written as the memory backend's state file writes the key's window
// after the key, so that a savepoint is the store's values behind the
// sections' headers.
type CountWindows[K comparable, T, A any] struct {
	size, every uint64
	store       *Keyed[K, countVal[T, A]]
	add         func(acc *A, r T)
	emit        func(k K, acc *A, ts int64)
}

// countVal is a key's open count window.
type countVal[T, A any] struct {
	n    uint64
	acc  A
	recs []eventtime.Timed[T]
}

// OpenCountWindows opens the count windows of size records, one every
// every records (every == size: tumbling), of subtask t of the node,
// empty or restored from the checkpoint the job resumes from (of either
// backend). add folds a record into an accumulator; emit gets every
// result (acc is valid only during the call, which must not call the
// windows); c writes the node's keys and accumulators, encT and decT
// the records a sliding window keeps (nil for tumbling ones). It panics
// on a size or slide that is zero or every > size: the compiler checks
// them.
func OpenCountWindows[K comparable, T, A any](t *checkpoint.Task, node int, size, every uint64, add func(acc *A, r T), emit func(k K, acc *A, ts int64), c *state.Codec[K, A], encT func(*codec.Writer, *T), decT func(*codec.Reader) *T) *CountWindows[K, T, A] {
	if size == 0 || every == 0 || every > size {
		panic(fmt.Sprintf("count windows of %d records every %d", size, every))
	}
	sliding := every < size
	if sliding && (encT == nil || decT == nil) {
		panic("pebblestate: sliding count windows need the records' codec")
	}
	w := &CountWindows[K, T, A]{size: size, every: every, add: add, emit: emit}
	vc := &state.Codec[K, countVal[T, A]]{
		Hash: c.Hash, EncodeKey: c.EncodeKey, DecodeKey: c.DecodeKey,
		EncodeValue: func(w *codec.Writer, v *countVal[T, A]) {
			w.Uvarint(v.n)
			if !sliding {
				c.EncodeValue(w, &v.acc)
				return
			}
			w.Uvarint(uint64(len(v.recs)))
			for i := range v.recs {
				m := w.Begin()
				w.Varint(v.recs[i].TS)
				encT(w, &v.recs[i].V)
				w.End(m)
			}
		},
		DecodeValue: func(r *codec.Reader) *countVal[T, A] {
			v := &countVal[T, A]{n: r.Uvarint()}
			if !sliding {
				if a := c.DecodeValue(r); a != nil {
					v.acc = *a
				}
				return v
			}
			n := r.Count()
			for range n {
				rr := r.Nested()
				t := eventtime.Timed[T]{TS: rr.Varint()}
				if x := decT(rr); x != nil {
					t.V = *x
				}
				v.recs = append(v.recs, t)
			}
			return v
		},
		KeySchema: c.KeySchema, ValueSchema: c.ValueSchema,
	}
	w.store = Open(t, node, vc)
	w.store.readMemory, w.store.noCanonical = w.readMemory, true
	w.store.addPart(w)
	return w
}

// SnapshotCountWindows adds the count windows w of node to the subtask's
// snapshot s: a checkpoint of their store (Snapshot).
func SnapshotCountWindows[K comparable, T, A any](s *checkpoint.Snapshot, node int, w *CountWindows[K, T, A]) {
	Snapshot(s, node, w.store)
}

func (c *CountWindows[K, T, A]) sliding() bool { return c.every < c.size }

// Add adds record r of key k at time ts, firing its window when r
// completes it, as eventtime.CountWindows.Add does.
func (c *CountWindows[K, T, A]) Add(k K, r T, ts int64) {
	v := c.store.Get(k)
	if v == nil {
		v = &countVal[T, A]{}
		c.store.Put(k, v)
	}
	v.n++
	if !c.sliding() {
		c.add(&v.acc, r)
		if v.n == c.size {
			c.emit(k, &v.acc, ts)
			c.store.Delete(k)
		}
		return
	}
	if uint64(len(v.recs)) == c.size {
		// A new slice: the old one's records may still be in use by the
		// capture of a checkpoint (copy on write encodes them first, but
		// shifting in place would change them under it).
		v.recs = append(make([]eventtime.Timed[T], 0, c.size), v.recs[1:]...)
	}
	v.recs = append(v.recs, eventtime.Timed[T]{TS: ts, V: r})
	if v.n == c.every {
		v.n = 0
		var acc A
		for i := range v.recs {
			c.add(&acc, v.recs[i].V)
		}
		c.emit(k, &acc, ts)
	}
}

func (c *CountWindows[K, T, A]) barrier()                          {}
func (c *CountWindows[K, T, A]) copyFrom(old kv.Store, lo, hi int) {}
func (c *CountWindows[K, T, A]) close()                            {}

// readMemory reads the count windows of the subtask's key groups in the
// state files of one subtask of the memory backend's form (a checkpoint
// of the memory backend, which writes them whole, or a savepoint) into
// the store: each section a header, then per key its window.
func (c *CountWindows[K, T, A]) readMemory(fs []storage.StateFile, l *storage.Loaded) {
	st := c.store
	for _, f := range fs {
		if f.Kind == storage.KindDelta {
			st.fail("restore "+f.Name, fmt.Errorf("%w: a delta of count windows: the memory backend writes them whole", codec.ErrCorrupt))
		}
		err := l.ReadSections(f, st.start, st.end, func(_ int, sec []byte) error {
			return eventtime.ReadCountSection(sec, func(er *codec.Reader) error {
				k := st.codec.DecodeKey(er)
				v := st.codec.DecodeValue(er)
				if err := er.Err(); err != nil {
					return err
				}
				if v.n >= c.every || uint64(len(v.recs)) > c.size {
					return fmt.Errorf("%w: count window of key %v holds %d records since it fired (windows of %d every %d now: the window changed)", codec.ErrCorrupt, k, v.n, c.size, c.every)
				}
				if st.Get(k) != nil {
					return fmt.Errorf("%w: key %v restored twice", codec.ErrCorrupt, k)
				}
				st.Put(k, v)
				return nil
			})
		})
		if err != nil {
			st.fail("restore", err)
		}
	}
}

// writeCanonical writes the count windows in db, a checkpoint of the
// store, as the memory backend's state file of the node
// (CountWindows.Snapshot's form): one section per key group, a header,
// then every key and its window, as the store holds them.
func (c *CountWindows[K, T, A]) writeCanonical(db kv.Store, id int64, stor *storage.Storage) ([]storage.StateFile, error) {
	st := c.store
	f, err := st.writeSections(db, id, stor,
		func(sec *codec.Writer) { eventtime.WriteWindowHeader(sec, eventtime.MinTime, 0) },
		func(sec *codec.Writer, key, value []byte) error {
			m := sec.Begin()
			sec.Raw(key)
			sec.Raw(value)
			sec.End(m)
			return nil
		})
	if err != nil {
		return nil, err
	}
	return []storage.StateFile{f}, nil
}
