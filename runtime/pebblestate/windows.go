package pebblestate

import (
	"errors"
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
)

// Windows are the open tumbling or sliding windows of one subtask of a
// windowed reduce or aggregate on the pebble backend, with the semantics
// of eventtime.WindowState (which the memory backend uses): in the
// subtask's store, so that a checkpoint writes the windows that changed
// since the last one and a restore links them.
//
// Each key's window is a value of the store (a Keyed, with its cache of
// decoded accumulators), keyed by the key and the window's start, holding
// its creation number, whether it fired, its end and its accumulator; and
// a timer (Timers, in the same store) at the window's end, or once it
// fired at its cleanup time (end plus allowed lateness), numbered with the
// window's creation number. Firing a watermark is reading the timers in
// order up to it: windows fire in ascending end, windows of equal end in
// creation order, as on memory. The watermark and the next creation
// number are written to the store at every barrier.
type Windows[K comparable, A any] struct {
	assign   eventtime.WindowAssigner
	lateness int64
	codec    *state.Codec[K, A]
	store    *Keyed[winKey[K], winVal[A]]
	timers   *Timers[winKey[K]]

	windowMeta
	buf []eventtime.Window
}

// winKey is a key's window, by its start.
type winKey[K comparable] struct {
	k     K
	start int64
}

// winVal is what the store holds of a key's window.
type winVal[A any] struct {
	seq   uint64
	fired bool
	end   int64
	acc   A
}

// metaWindows is the key of the windows' watermark and next creation
// number.
var metaWindows = []byte{prefixMeta, 'w'}

// OpenWindows opens the windows of subtask t of the windowed node, empty
// or restored from the checkpoint the job resumes from (of either
// backend), with assigner a (tumbling or sliding) and allowed lateness in
// milliseconds; c writes the node's keys and accumulators.
func OpenWindows[K comparable, A any](t *checkpoint.Task, node int, a eventtime.WindowAssigner, lateness int64, c *state.Codec[K, A]) *Windows[K, A] {
	if err := a.Validate(); err != nil {
		panic(err)
	}
	if a.Kind == eventtime.Session {
		panic("pebblestate: OpenWindows takes tumbling or sliding windows: sessions are OpenSessions'")
	}
	s := &Windows[K, A]{assign: a, lateness: lateness, codec: c, windowMeta: windowMeta{wm: eventtime.MinTime}}
	wc := &state.Codec[winKey[K], winVal[A]]{
		Hash: func(k winKey[K]) uint64 { return c.Hash(k.k) },
		EncodeKey: func(w *codec.Writer, k winKey[K]) {
			c.EncodeKey(w, k.k)
			w.Varint(k.start)
		},
		DecodeKey: func(r *codec.Reader) winKey[K] {
			k := c.DecodeKey(r)
			return winKey[K]{k, r.Varint()}
		},
		EncodeValue: func(w *codec.Writer, v *winVal[A]) {
			w.Uvarint(v.seq)
			w.Bool(v.fired)
			w.Varint(v.end)
			c.EncodeValue(w, &v.acc)
		},
		DecodeValue: func(r *codec.Reader) *winVal[A] {
			v := &winVal[A]{seq: r.Uvarint(), fired: r.Bool(), end: r.Varint()}
			if a := c.DecodeValue(r); a != nil {
				v.acc = *a
			}
			return v
		},
		KeySchema: c.KeySchema, ValueSchema: c.ValueSchema,
	}
	s.store = Open(t, node, wc)
	s.store.readMemory, s.store.noCanonical = s.readMemory, true
	s.timers = OpenTimers(s.store)
	s.timers.internal = true
	s.store.addPart(s)
	return s
}

// SnapshotWindows adds the windows w of node to the subtask's snapshot
// s: a checkpoint of their store (Snapshot).
func SnapshotWindows[K comparable, A any](s *checkpoint.Snapshot, node int, w *Windows[K, A]) {
	Snapshot(s, node, w.store)
}

func (s *Windows[K, A]) load() { s.windowMeta.load(s.store.db, s.store.fail) }

// Watermark is the largest watermark Advance has seen (after a restore,
// the checkpoint's), MinTime at first.
func (s *Windows[K, A]) Watermark() int64 {
	s.load()
	return s.wm
}

// cleanup is the time at which w is dropped.
func (s *Windows[K, A]) cleanup(w eventtime.Window) int64 {
	return eventtime.AddSat(w.MaxTimestamp(), s.lateness)
}

// Add adds a record of key k at time ts, from an input at watermark
// inputWatermark, as WindowState.Add does: add folds it into the
// accumulator of each of its windows that is not late; onUpdate reports
// those that fired already. It returns false when every window of the
// record is late.
func (s *Windows[K, A]) Add(k K, ts, inputWatermark int64, add func(acc *A), onUpdate func(k K, w eventtime.Window, acc *A)) bool {
	return s.add(k, ts, inputWatermark, add, onUpdate, nil)
}

// add is Add that also reports every window that got the record, whether
// or not it fired, to each (after add, before onUpdate).
func (s *Windows[K, A]) add(k K, ts, inputWatermark int64, add func(acc *A), onUpdate func(k K, w eventtime.Window, acc *A), each func(k K, w eventtime.Window, fired bool, acc *A)) bool {
	s.load()
	wm := max(inputWatermark, s.wm)
	s.buf = s.assign.Assign(ts, s.buf)
	ws := s.buf
	if len(ws) == 0 {
		return true
	}
	first := 0
	for first < len(ws) && s.cleanup(ws[first]) <= wm {
		first++
	}
	if first == len(ws) {
		return false
	}
	for _, w := range ws[first:] {
		wk := winKey[K]{k, w.Start}
		v := s.store.Get(wk)
		if v == nil {
			v = &winVal[A]{seq: s.seq, end: w.End, fired: w.MaxTimestamp() <= s.wm}
			s.seq++
			s.store.Put(wk, v)
			at := w.MaxTimestamp()
			if v.fired {
				at = s.cleanup(w)
			}
			s.timers.registerSeq(wk, at, false, v.seq)
		}
		add(&v.acc)
		if each != nil {
			each(k, w, v.fired, &v.acc)
		}
		if v.fired && onUpdate != nil {
			onUpdate(k, w, &v.acc)
		}
	}
	return true
}

// Advance moves the watermark to wm: every window with MaxTimestamp <= wm
// that has not fired fires once, in ascending end, then creation; windows
// whose cleanup time is <= wm are dropped. acc is valid only during the
// call, which must not call s.
func (s *Windows[K, A]) Advance(wm int64, fire func(k K, w eventtime.Window, acc *A)) {
	s.load()
	s.wm = max(s.wm, wm)
	wm = s.wm
	s.timers.AdvanceEvent(wm, func(wk winKey[K], _ int64) {
		v := s.store.Get(wk)
		if v == nil {
			s.store.fail("fire", fmt.Errorf("%w: a timer of window %d of key %v, which the store does not hold", codec.ErrCorrupt, wk.start, wk.k))
		}
		w := eventtime.Window{Start: wk.start, End: v.end}
		if !v.fired {
			v.fired = true
			if fire != nil {
				fire(wk.k, w, &v.acc)
			}
			if c := s.cleanup(w); c > wm {
				s.timers.registerSeq(wk, c, false, v.seq)
				return
			}
		}
		s.store.Delete(wk)
	})
}

// unfired calls yield for every window that has not fired and whose
// MaxTimestamp is after at, in the order they would fire: ascending end,
// then creation (their timers' order). acc is valid only during the call,
// which may change it but must not call s.
func (s *Windows[K, A]) unfired(at int64, yield func(k K, w eventtime.Window, acc *A)) {
	s.load()
	s.timers.scan(eventDomain, at, func(wk winKey[K], _ int64) {
		v := s.store.Get(wk)
		if v == nil {
			s.store.fail("read", fmt.Errorf("%w: a timer of window %d of key %v, which the store does not hold", codec.ErrCorrupt, wk.start, wk.k))
		}
		if !v.fired {
			yield(wk.k, eventtime.Window{Start: wk.start, End: v.end}, &v.acc)
		}
	})
}

// barrier writes the watermark and the next creation number, when they
// changed.
func (s *Windows[K, A]) barrier() { s.windowMeta.barrier(s.store.db, s.store.fail) }

// copyFrom merges the watermark and the next creation number of an old
// store (the windows and their timers are copied with the key-group
// ranges): the lowest watermark, the highest number.
func (s *Windows[K, A]) copyFrom(old kv.Store, lo, hi int) {
	s.windowMeta.copyFrom(s.store.db, old, s.store.fail)
}

// readMemory reads the windows of the subtask's key groups in the state
// files of one subtask of the memory backend's form (a checkpoint of the
// memory backend, or a savepoint) into the store.
func (s *Windows[K, A]) readMemory(fs []storage.StateFile, l *storage.Loaded) {
	for _, f := range fs {
		if f.Kind == storage.KindDelta {
			s.readMemoryChain(fs, l)
			return
		}
	}
	for _, f := range fs {
		s.readMemoryFile(f, l)
	}
}

// readMemoryChain reads a full file and the deltas on top of it: the
// memory backend's windows apply them (a delta's watermark fires and
// drops windows of its base), and the result goes into the store.
func (s *Windows[K, A]) readMemoryChain(fs []storage.StateFile, l *storage.Loaded) {
	s.load()
	ws := eventtime.NewWindowState[K, A](s.assign, s.lateness, nil)
	read := false
	for _, f := range fs {
		err := l.ReadSections(f, s.store.start, s.store.end, func(_ int, sec []byte) error {
			read = true
			return ws.RestoreSection(sec, f.Kind == storage.KindDelta, s.codec.DecodeKey, s.codec.DecodeValue)
		})
		if err != nil {
			s.store.fail("restore", err)
		}
	}
	if err := ws.EndChain(); err != nil {
		s.store.fail("restore", err)
	}
	if !read {
		return
	}
	ws.Windows(func(k K, w eventtime.Window, seq uint64, fired bool, acc *A) bool {
		s.put(k, w, seq, fired, acc)
		return true
	})
	s.restoredHeader(ws.Watermark(), ws.Seq())
	s.windowMeta.write(s.store.db, s.store.fail)
}

// put adds a restored window of key k to the store, with its timer.
func (s *Windows[K, A]) put(k K, w eventtime.Window, seq uint64, fired bool, acc *A) {
	v := &winVal[A]{seq: seq, fired: fired, end: w.End}
	if acc != nil {
		v.acc = *acc
	}
	wk := winKey[K]{k, w.Start}
	s.store.Put(wk, v)
	at := w.MaxTimestamp()
	if fired {
		at = s.cleanup(w)
	}
	s.timers.registerSeq(wk, at, false, seq)
	s.seq = max(s.seq, seq+1)
}

// readMemoryFile reads the windows of the subtask's key groups in one
// full state file of the memory backend's form into the store.
func (s *Windows[K, A]) readMemoryFile(f storage.StateFile, l *storage.Loaded) {
	s.load()
	err := l.ReadSections(f, s.store.start, s.store.end, func(_ int, sec []byte) error {
		wm, seq, ok, err := eventtime.ReadWindows(sec, s.codec.DecodeKey, s.codec.DecodeValue, func(k K, w eventtime.Window, seq uint64, fired bool, acc *A) error {
			if w.End <= w.Start || w.End-w.Start != s.assign.Size {
				return fmt.Errorf("%w: window %v of key %v: the windows are %dms long now: the window size changed", codec.ErrCorrupt, w, k, s.assign.Size)
			}
			s.put(k, w, seq, fired, acc)
			return nil
		})
		if ok {
			s.restoredHeader(wm, seq)
		}
		return err
	})
	if err != nil {
		s.store.fail("restore", err)
	}
	s.windowMeta.write(s.store.db, s.store.fail)
}

// writeCanonical writes the windows in db, a checkpoint of the store, as
// the memory backend's state file of the node (WindowState.Snapshot's
// form): one section per key group, each with the watermark and the next
// creation number, then every key's window.
func (s *Windows[K, A]) writeCanonical(db kv.Store, id int64, stor *storage.Storage) ([]storage.StateFile, error) {
	st := s.store
	wm, seq, arrival, group, err := s.header(db)
	if err != nil {
		return nil, st.errorf("read", err)
	}
	var key, acc codec.Writer
	f, err := st.writeSections(db, id, stor,
		func(sec *codec.Writer) { eventtime.WriteWindowJoinHeader(sec, wm, seq, arrival, group) },
		func(sec *codec.Writer, k, v []byte) error {
			kr, vr := codec.NewReader(k), codec.NewReader(v)
			wk := st.codec.DecodeKey(kr)
			wv := st.codec.DecodeValue(vr)
			if err := errors.Join(kr.Err(), vr.Err()); err != nil {
				return st.errorf("decode a window", err)
			}
			key.Reset()
			s.codec.EncodeKey(&key, wk.k)
			acc.Reset()
			s.codec.EncodeValue(&acc, &wv.acc)
			eventtime.WriteWindow(sec, key.Bytes(), eventtime.Window{Start: wk.start, End: wv.end}, wv.seq, wv.fired, acc.Bytes())
			return nil
		})
	if err != nil {
		return nil, err
	}
	return []storage.StateFile{f}, nil
}

func (s *Windows[K, A]) close() {}
