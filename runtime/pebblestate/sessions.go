package pebblestate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
)

// Sessions are the open session windows of one subtask of a windowed
// reduce or aggregate on the pebble backend, with the semantics of
// eventtime.WindowState's sessions (which the memory backend uses): in
// the subtask's store, so that a checkpoint writes the keys whose
// sessions changed since the last one and a restore links them.
//
// A key's sessions are one value of the store (a Keyed, with its cache of
// decoded values), sorted by start: a record reads the sessions of its key
// once, to find those its window overlaps or touches and merge them, as
// WindowState does. Sessions of a key are few (they are apart by the gap
// at least, and dropped after their end plus the allowed lateness), so
// rewriting the key's value when one of them changes costs about what
// rewriting that one would. Each session has a timer (Timers, in the same
// store) at its MaxTimestamp, or once it fired at its cleanup time,
// numbered with the session's creation number and named by the key and the
// session's start: timers of two sessions of a key may fall on the same
// time. Sessions fire in ascending time, equal times in creation order, as
// on memory. The watermark and the next creation number are written to
// the store at every barrier, as Windows does.
type Sessions[K comparable, A any] struct {
	assign   eventtime.WindowAssigner
	lateness int64
	merge    func(dst, src *A)
	codec    *state.Codec[K, A]
	store    *Keyed[K, []session[A]]
	timers   *Timers[winKey[K]]

	windowMeta
	buf []eventtime.Window
}

// session is one session of a key.
type session[A any] struct {
	start, end int64
	seq        uint64
	fired      bool
	acc        A
}

func (e *session[A]) window() eventtime.Window {
	return eventtime.Window{Start: e.start, End: e.end}
}

// OpenSessions opens the session windows of subtask t of the windowed
// node, empty or restored from the checkpoint the job resumes from (of
// either backend), with session assigner a and allowed lateness in
// milliseconds; merge combines the accumulators of merging sessions, c
// writes the node's keys and accumulators.
func OpenSessions[K comparable, A any](t *checkpoint.Task, node int, a eventtime.WindowAssigner, lateness int64, merge func(dst, src *A), c *state.Codec[K, A]) *Sessions[K, A] {
	if err := a.Validate(); err != nil {
		panic(err)
	}
	if a.Kind != eventtime.Session || merge == nil {
		panic("pebblestate: OpenSessions takes a session assigner and a merge function")
	}
	s := &Sessions[K, A]{assign: a, lateness: lateness, merge: merge, codec: c, windowMeta: windowMeta{wm: eventtime.MinTime}}
	sc := &state.Codec[K, []session[A]]{
		Hash: c.Hash, EncodeKey: c.EncodeKey, DecodeKey: c.DecodeKey,
		EncodeValue: func(w *codec.Writer, v *[]session[A]) {
			w.Uvarint(uint64(len(*v)))
			for i := range *v {
				e := &(*v)[i]
				w.Varint(e.start)
				w.Varint(e.end)
				w.Uvarint(e.seq)
				w.Bool(e.fired)
				m := w.Begin()
				c.EncodeValue(w, &e.acc)
				w.End(m)
			}
		},
		DecodeValue: func(r *codec.Reader) *[]session[A] {
			n := r.Count()
			v := make([]session[A], 0, n)
			var sub codec.Reader
			for range n {
				e := session[A]{start: r.Varint(), end: r.Varint(), seq: r.Uvarint(), fired: r.Bool()}
				r.NestedTo(&sub)
				if a := c.DecodeValue(&sub); a != nil {
					e.acc = *a
				}
				v = append(v, e)
			}
			return &v
		},
		KeySchema: c.KeySchema, ValueSchema: c.ValueSchema,
	}
	s.store = Open(t, node, sc)
	s.store.readMemory, s.store.noCanonical = s.readMemory, true
	s.timers = openTimersOf(s.store, func(k winKey[K]) int { return s.store.keyGroup(k.k) },
		func(w *codec.Writer, k winKey[K]) {
			c.EncodeKey(w, k.k)
			w.Varint(k.start)
		},
		func(r *codec.Reader) winKey[K] {
			k := c.DecodeKey(r)
			return winKey[K]{k, r.Varint()}
		})
	s.timers.internal = true
	s.store.addPart(s)
	return s
}

// SnapshotSessions adds the sessions w of node to the subtask's snapshot
// s: a checkpoint of their store (Snapshot).
func SnapshotSessions[K comparable, A any](s *checkpoint.Snapshot, node int, w *Sessions[K, A]) {
	Snapshot(s, node, w.store)
}

func (s *Sessions[K, A]) load() { s.windowMeta.load(s.store.db, s.store.fail) }

// Watermark is the largest watermark Advance has seen (after a restore,
// the checkpoint's), MinTime at first.
func (s *Sessions[K, A]) Watermark() int64 {
	s.load()
	return s.wm
}

// cleanup is the time at which w is dropped.
func (s *Sessions[K, A]) cleanup(w eventtime.Window) int64 {
	return eventtime.AddSat(w.MaxTimestamp(), s.lateness)
}

// due is the time of e's timer: its MaxTimestamp until it fired, then its
// cleanup time.
func (s *Sessions[K, A]) due(e *session[A]) int64 {
	if e.fired {
		return s.cleanup(e.window())
	}
	return e.window().MaxTimestamp()
}

// Add adds a record of key k at time ts, from an input at watermark
// inputWatermark, as WindowState.Add does for sessions: the record's
// window merges with the key's sessions it overlaps or touches, add folds
// it into the merged accumulator, and onUpdate reports the session when it
// fired already. It returns false when the merged session is late.
func (s *Sessions[K, A]) Add(k K, ts, inputWatermark int64, add func(acc *A), onUpdate func(k K, w eventtime.Window, acc *A)) bool {
	if s.assign.DynamicGap {
		panic("sessions with a gap per record take it with AddGap")
	}
	return s.add(k, ts, 0, inputWatermark, add, onUpdate, nil)
}

// AddGap is Add for sessions whose gap comes with each record
// (WindowAssigner.DynamicGap), as WindowState.AddGap. It panics when gap
// is not positive: the caller checks the user's gap.
func (s *Sessions[K, A]) AddGap(k K, ts, gap, inputWatermark int64, add func(acc *A), onUpdate func(k K, w eventtime.Window, acc *A)) bool {
	if gap <= 0 {
		panic(fmt.Sprintf("a session gap must be positive, got %dms", gap))
	}
	return s.add(k, ts, gap, inputWatermark, add, onUpdate, nil)
}

// add is Add with the record's gap (0: the assigner's) that also reports
// the session that got the record, whether or not it fired, to each
// (after add, before onUpdate).
func (s *Sessions[K, A]) add(k K, ts, gap, inputWatermark int64, add func(acc *A), onUpdate func(k K, w eventtime.Window, acc *A), each func(k K, w eventtime.Window, fired bool, acc *A)) bool {
	s.load()
	wm := max(inputWatermark, s.wm)
	s.buf = s.assign.Assign(ts, s.buf)
	c := s.buf[0]
	if gap > 0 {
		c.End = eventtime.AddSat(c.Start, gap)
	}
	v := s.store.Get(k)
	var wins []session[A]
	if v != nil {
		wins = *v
	}
	// The sessions c overlaps or touches are a run [i, j).
	i := 0
	for i < len(wins) && wins[i].end < c.Start {
		i++
	}
	j := i
	m := c
	for j < len(wins) && wins[j].start <= c.End {
		m.Start = min(m.Start, wins[j].start)
		m.End = max(m.End, wins[j].end)
		j++
	}
	if s.cleanup(m) <= wm {
		return false
	}
	if i == j {
		e := session[A]{start: m.Start, end: m.End, seq: s.seq, fired: m.MaxTimestamp() <= s.wm}
		s.seq++
		wins = slices.Insert(wins, i, e)
		s.timers.setKnown(winKey[K]{k, e.start}, s.due(&e), e.seq)
	} else {
		e := &wins[i]
		for o := i + 1; o < j; o++ {
			s.merge(&e.acc, &wins[o].acc)
			s.timers.deleteKnown(winKey[K]{k, wins[o].start}, s.due(&wins[o]), wins[o].seq)
		}
		wins = slices.Delete(wins, i+1, j)
		e = &wins[i]
		if m != e.window() {
			s.timers.deleteKnown(winKey[K]{k, e.start}, s.due(e), e.seq)
			e.start, e.end = m.Start, m.End
			e.fired = m.MaxTimestamp() <= s.wm
			s.timers.setKnown(winKey[K]{k, e.start}, s.due(e), e.seq)
		}
	}
	if v == nil {
		s.store.Put(k, &wins)
	} else {
		*v = wins
	}
	e := &wins[i]
	add(&e.acc)
	if each != nil {
		each(k, e.window(), e.fired, &e.acc)
	}
	if e.fired && onUpdate != nil {
		onUpdate(k, e.window(), &e.acc)
	}
	return true
}

// Advance moves the watermark to wm: every session with MaxTimestamp <= wm
// that has not fired fires once, in ascending time, then creation;
// sessions whose cleanup time is <= wm are dropped. acc is valid only
// during the call, which must not call s.
func (s *Sessions[K, A]) Advance(wm int64, fire func(k K, w eventtime.Window, acc *A)) {
	s.load()
	s.wm = max(s.wm, wm)
	wm = s.wm
	s.timers.AdvanceEvent(wm, func(wk winKey[K], _ int64) {
		v := s.store.Get(wk.k)
		i := -1
		if v != nil {
			i = slices.IndexFunc(*v, func(e session[A]) bool { return e.start == wk.start })
		}
		if i < 0 {
			s.store.fail("fire", fmt.Errorf("%w: a timer of session %d of key %v, which the store does not hold", codec.ErrCorrupt, wk.start, wk.k))
		}
		e := &(*v)[i]
		if !e.fired {
			e.fired = true
			if fire != nil {
				fire(wk.k, e.window(), &e.acc)
			}
			if c := s.cleanup(e.window()); c > wm {
				s.timers.setKnown(wk, c, e.seq)
				return
			}
		}
		if len(*v) == 1 {
			s.store.Delete(wk.k)
			return
		}
		*v = slices.Delete(*v, i, i+1)
	})
}

// unfired calls yield for every session that has not fired and whose
// MaxTimestamp is after at, in the order they would fire: ascending end,
// then creation (their timers' order). acc is valid only during the call,
// which may change it but must not call s.
func (s *Sessions[K, A]) unfired(at int64, yield func(k K, w eventtime.Window, acc *A)) {
	s.load()
	s.timers.scan(eventDomain, at, func(wk winKey[K], _ int64) {
		v := s.store.Get(wk.k)
		i := -1
		if v != nil {
			i = slices.IndexFunc(*v, func(e session[A]) bool { return e.start == wk.start })
		}
		if i < 0 {
			s.store.fail("read", fmt.Errorf("%w: a timer of session %d of key %v, which the store does not hold", codec.ErrCorrupt, wk.start, wk.k))
		}
		if e := &(*v)[i]; !e.fired {
			yield(wk.k, e.window(), &e.acc)
		}
	})
}

// barrier writes the watermark and the next creation number, when they
// changed.
func (s *Sessions[K, A]) barrier() { s.windowMeta.barrier(s.store.db, s.store.fail) }

// copyFrom merges the watermark and the next creation number of an old
// store (the sessions and their timers are copied with the key-group
// ranges): the lowest watermark, the highest number.
func (s *Sessions[K, A]) copyFrom(old kv.Store, lo, hi int) {
	s.windowMeta.copyFrom(s.store.db, old, s.store.fail)
}

// readMemory reads the sessions of the subtask's key groups in the state
// files of one subtask of the memory backend's form (a checkpoint of the
// memory backend, which writes sessions whole, or a savepoint) into the
// store.
func (s *Sessions[K, A]) readMemory(fs []storage.StateFile, l *storage.Loaded) {
	s.load()
	for _, f := range fs {
		if f.Kind == storage.KindDelta {
			s.store.fail("restore "+f.Name, fmt.Errorf("%w: a delta of session windows: the memory backend writes sessions whole", codec.ErrCorrupt))
		}
		err := l.ReadSections(f, s.store.start, s.store.end, func(_ int, sec []byte) error {
			wm, seq, ok, err := eventtime.ReadWindows(sec, s.codec.DecodeKey, s.codec.DecodeValue, s.put)
			if ok {
				s.restoredHeader(wm, seq)
			}
			return err
		})
		if err != nil {
			s.store.fail("restore", err)
		}
	}
	s.windowMeta.write(s.store.db, s.store.fail)
}

// put adds a restored session of key k to the store, with its timer.
func (s *Sessions[K, A]) put(k K, w eventtime.Window, seq uint64, fired bool, acc *A) error {
	if w.End <= w.Start {
		return fmt.Errorf("%w: session %v of key %v is empty", codec.ErrCorrupt, w, k)
	}
	e := session[A]{start: w.Start, end: w.End, seq: seq, fired: fired}
	if acc != nil {
		e.acc = *acc
	}
	v := s.store.Get(k)
	if v == nil {
		v = &[]session[A]{}
		s.store.Put(k, v)
	}
	i, _ := slices.BinarySearchFunc(*v, w.Start, func(e session[A], start int64) int { return cmp.Compare(e.start, start) })
	if i > 0 && (*v)[i-1].end >= w.Start || i < len(*v) && (*v)[i].start <= w.End {
		return fmt.Errorf("%w: session %v of key %v overlaps another", codec.ErrCorrupt, w, k)
	}
	*v = slices.Insert(*v, i, e)
	s.timers.registerSeq(winKey[K]{k, w.Start}, s.due(&e), false, seq)
	s.seq = max(s.seq, seq+1)
	return nil
}

// writeCanonical writes the sessions in db, a checkpoint of the store, as
// the memory backend's state file of the node (WindowState.Snapshot's
// form): one section per key group, each with the watermark and the next
// creation number, then every key's sessions.
func (s *Sessions[K, A]) writeCanonical(db kv.Store, id int64, stor *storage.Storage) ([]storage.StateFile, error) {
	st := s.store
	wm, seq, arrival, group, err := s.header(db)
	if err != nil {
		return nil, st.errorf("read", err)
	}
	var acc codec.Writer
	f, err := st.writeSections(db, id, stor,
		func(sec *codec.Writer) { eventtime.WriteWindowJoinHeader(sec, wm, seq, arrival, group) },
		func(sec *codec.Writer, k, v []byte) error {
			kr, vr := codec.NewReader(k), codec.NewReader(v)
			st.codec.DecodeKey(kr)
			wins := st.codec.DecodeValue(vr)
			if err := errors.Join(kr.Err(), vr.Err()); err != nil {
				return st.errorf("decode a key's sessions", err)
			}
			for i := range *wins {
				e := &(*wins)[i]
				acc.Reset()
				s.codec.EncodeValue(&acc, &e.acc)
				eventtime.WriteWindow(sec, k, e.window(), e.seq, e.fired, acc.Bytes())
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return []storage.StateFile{f}, nil
}

func (s *Sessions[K, A]) close() {}
