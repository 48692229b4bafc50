package pebblestate

import (
	"errors"
	"fmt"
	"math"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
)

// WindowJoin is the state of one subtask of a window join on the pebble
// backend, with the semantics of eventtime.WindowJoin (which the memory
// backend uses): each key's window is a window of Windows (tumbling or
// sliding) or a session of Sessions, its accumulator the window's
// records of both sides, so that a checkpoint writes the windows that
// changed since the last one and a restore links them. Sessions that
// merge merge their records, each side in arrival order, keeping the
// emission group of each, so that pairs emitted before the merge are
// not emitted again.
//
// A window that fired and got records since (within the allowed
// lateness) has a processing-time timer, in the windows' timers, at its
// end, numbered with its creation number, which no window otherwise
// uses: Advance runs those first, emitting the new pairs in ascending
// end, then creation, as memory does, then fires the windows the
// watermark reaches. A session that merges or grows after its timer was
// set leaves it behind: the timer runs for nothing, as memory skips the
// windows it marked that are gone or no longer fired, and the merged
// session has its own timer when it has fired. The next arrival number
// and emission group are written to the store at every barrier.
type WindowJoin[K comparable, L, R any] struct {
	win joinWindows[K, eventtime.JoinRecords[L, R]]
	st  keyedStore // win's
	// sessions is set when win holds sessions.
	sessions bool

	seq   uint64 // the arrival number of the next record
	group uint64 // the next emission group, from 1
	// loaded is set once the counters are read from the store; written
	// is what the store holds of them.
	loaded  bool
	written [2]uint64

	// Bound once, so that adding a record allocates no closure.
	addL, addR func(*eventtime.JoinRecords[L, R])
	eachFn     func(K, eventtime.Window, bool, *eventtime.JoinRecords[L, R])
	fireFn     func(K, eventtime.Window, *eventtime.JoinRecords[L, R])
	dirtyFn    func(winKey[K], int64)
	curL       L
	curR       R
	emit       func(l L, r R, w eventtime.Window)
	idx        []int
	// codec writes the keys and the windows' records.
	codec *state.Codec[K, eventtime.JoinRecords[L, R]]
}

// joinWindows is what WindowJoin needs of Windows and Sessions beside
// what Triggered does: a window by its key and start, its store and its
// timers.
type joinWindows[K comparable, A any] interface {
	triggerable[K, A]
	// window returns the open window of wk.k that starts at wk.start: its
	// end, creation number, whether it fired, and its accumulator, which
	// may be changed; acc is nil when there is none.
	window(wk winKey[K]) (end int64, seq uint64, fired bool, acc *A)
	// count is the number of open windows. It reads them all.
	count() int
	windowTimers() *Timers[winKey[K]]
	meta() *windowMeta
	keyed() keyedStore
}

// keyedStore is what a part built on the windows (WindowJoin) needs of
// their store, whatever its key and value types.
type keyedStore struct {
	db         func() kv.Store
	fail       func(what string, err error)
	start, end int // the subtask's key groups
	addPart    func(part)
	// readMemory is the store's Keyed.readMemory, which may be wrapped.
	readMemory *func([]storage.StateFile, *storage.Loaded)
}

func keyedOf[K comparable, V any](st *Keyed[K, V]) keyedStore {
	return keyedStore{db: func() kv.Store { return st.db }, fail: st.fail, start: st.start, end: st.end, addPart: st.addPart, readMemory: &st.readMemory}
}

func (w trigWindows[K, A]) window(wk winKey[K]) (int64, uint64, bool, *A) {
	v := w.store.Get(wk)
	if v == nil {
		return 0, 0, false, nil
	}
	return v.end, v.seq, v.fired, &v.acc
}

func (w trigWindows[K, A]) count() int                       { return w.store.Len() }
func (w trigWindows[K, A]) windowTimers() *Timers[winKey[K]] { return w.timers }
func (w trigWindows[K, A]) meta() *windowMeta                { return &w.windowMeta }
func (w trigWindows[K, A]) keyed() keyedStore                { return keyedOf(w.store) }

func (s trigSessions[K, A]) window(wk winKey[K]) (int64, uint64, bool, *A) {
	v := s.store.Get(wk.k)
	if v == nil {
		return 0, 0, false, nil
	}
	for i := range *v {
		if e := &(*v)[i]; e.start == wk.start {
			return e.end, e.seq, e.fired, &e.acc
		}
	}
	return 0, 0, false, nil
}

func (s trigSessions[K, A]) count() int {
	n := 0
	for _, v := range s.store.All {
		n += len(*v)
	}
	return n
}

func (s trigSessions[K, A]) windowTimers() *Timers[winKey[K]] { return s.timers }
func (s trigSessions[K, A]) meta() *windowMeta                { return &s.windowMeta }
func (s trigSessions[K, A]) keyed() keyedStore                { return keyedOf(s.store) }

// metaWindowJoin is the key of the join's next arrival number and
// emission group.
var metaWindowJoin = []byte{prefixMeta, 'J'}

// OpenWindowJoin opens the windows of subtask t of the window join node,
// empty or restored from the checkpoint the job resumes from (of either
// backend), with assigner a (tumbling, sliding, or sessions of a fixed
// gap) and allowed lateness in milliseconds; c writes the node's keys and
// left records, encR and decR its right records.
func OpenWindowJoin[K comparable, L, R any](t *checkpoint.Task, node int, a eventtime.WindowAssigner, lateness int64, c *state.Codec[K, L], encR func(*codec.Writer, *R), decR func(*codec.Reader) *R) *WindowJoin[K, L, R] {
	if a.DynamicGap {
		panic("pebblestate: a window join's sessions have a fixed gap")
	}
	j := &WindowJoin[K, L, R]{group: 1}
	wc := &state.Codec[K, eventtime.JoinRecords[L, R]]{
		Hash: c.Hash, EncodeKey: c.EncodeKey, DecodeKey: c.DecodeKey,
		EncodeValue: func(w *codec.Writer, a *eventtime.JoinRecords[L, R]) { a.Encode(w, c.EncodeValue, encR) },
		DecodeValue: func(r *codec.Reader) *eventtime.JoinRecords[L, R] {
			return eventtime.DecodeJoinRecords(r, c.DecodeValue, decR)
		},
		KeySchema: c.KeySchema, ValueSchema: c.ValueSchema,
	}
	j.codec = wc
	if a.Kind == eventtime.Session {
		j.win = trigSessions[K, eventtime.JoinRecords[L, R]]{OpenSessions(t, node, a, lateness, eventtime.MergeJoinRecords[L, R], wc)}
		j.sessions = true
	} else {
		j.win = trigWindows[K, eventtime.JoinRecords[L, R]]{OpenWindows(t, node, a, lateness, wc)}
	}
	j.win.meta().counters = readWindowJoinMeta
	j.st = j.win.keyed()
	st := j.st
	readWindows := *st.readMemory
	*st.readMemory = func(fs []storage.StateFile, l *storage.Loaded) {
		readWindows(fs, l)
		for _, f := range fs { // a window join's files are whole: no deltas
			j.readMemory(f, l)
		}
	}
	st.addPart(j)
	j.addL = func(a *eventtime.JoinRecords[L, R]) { a.AddLeft(j.seq, j.curL) }
	j.addR = func(a *eventtime.JoinRecords[L, R]) { a.AddRight(j.seq, j.curR) }
	j.eachFn = j.each
	j.fireFn = func(_ K, w eventtime.Window, a *eventtime.JoinRecords[L, R]) { j.pairs(w, a) }
	j.dirtyFn = j.dirty
	return j
}

// SnapshotWindowJoin adds the join j of node to the subtask's snapshot s:
// a checkpoint of its store (Snapshot).
func SnapshotWindowJoin[K comparable, L, R any](s *checkpoint.Snapshot, node int, j *WindowJoin[K, L, R]) {
	j.win.snapshot(s, node)
}

func (j *WindowJoin[K, L, R]) load() {
	if j.loaded {
		return
	}
	j.loaded = true
	st := j.st
	seq, group, err := readWindowJoinMeta(st.db())
	if err != nil {
		st.fail("join: read", err)
	}
	j.seq, j.group = max(j.seq, seq), max(j.group, group)
	j.written = [2]uint64{seq, group}
}

// readWindowJoinMeta reads the next arrival number and emission group in
// db (0 and 0 when it has none).
func readWindowJoinMeta(db kv.Reader) (seq, group uint64, err error) {
	v, closer, err := db.Get(metaWindowJoin)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer closer.Close()
	r := codec.NewReader(v)
	seq, group = r.Uvarint(), r.Uvarint()
	return seq, group, r.Err()
}

func (j *WindowJoin[K, L, R]) writeMeta(db kv.Store) {
	var w codec.Writer
	w.Uvarint(j.seq)
	w.Uvarint(j.group)
	if err := db.Set(metaWindowJoin, w.Bytes()); err != nil {
		j.st.fail("join: write", err)
	}
	j.written = [2]uint64{j.seq, j.group}
}

// Len is the number of open windows. It reads them all.
func (j *WindowJoin[K, L, R]) Len() int { return j.win.count() }

// Watermark is the largest watermark Advance has seen.
func (j *WindowJoin[K, L, R]) Watermark() int64 { return j.win.Watermark() }

// AddLeft buffers a left record of key k at time ts in its windows. It
// returns false when all of them are late for it.
func (j *WindowJoin[K, L, R]) AddLeft(k K, l L, ts, inputWatermark int64) bool {
	j.load()
	j.curL = l
	ok := j.win.add(k, ts, 0, inputWatermark, j.addL, j.eachFn)
	var zero L
	j.curL = zero
	j.seq++
	return ok
}

// AddRight buffers a right record, like AddLeft.
func (j *WindowJoin[K, L, R]) AddRight(k K, r R, ts, inputWatermark int64) bool {
	j.load()
	j.curR = r
	ok := j.win.add(k, ts, 0, inputWatermark, j.addR, j.eachFn)
	var zero R
	j.curR = zero
	j.seq++
	return ok
}

// each notes that a window that fired got a record: its processing-time
// timer at its end (once).
func (j *WindowJoin[K, L, R]) each(k K, w eventtime.Window, fired bool, _ *eventtime.JoinRecords[L, R]) {
	if !fired {
		return
	}
	wk := winKey[K]{k, w.Start}
	_, seq, _, _ := j.win.window(wk)
	j.win.windowTimers().registerSeq(wk, w.End, true, seq)
}

// Advance emits the new pairs of windows that fired before and got records
// since; then it moves the combined watermark to wm, emitting the pairs of
// every window that fires, and drops windows past their lateness.
func (j *WindowJoin[K, L, R]) Advance(wm int64, emit func(l L, r R, w eventtime.Window)) {
	j.load()
	j.emit = emit
	j.win.windowTimers().AdvanceProcessing(math.MaxInt64, j.dirtyFn)
	j.win.Advance(wm, j.fireFn)
	j.emit = nil
}

// dirty emits the new pairs of a window that fired and got records since,
// whose timer at its end ran.
func (j *WindowJoin[K, L, R]) dirty(wk winKey[K], at int64) {
	end, _, fired, acc := j.win.window(wk)
	if acc == nil && !j.sessions {
		j.st.fail("join", fmt.Errorf("%w: window %d of key %v has new records, but the store does not hold it", codec.ErrCorrupt, wk.start, wk.k))
	}
	if acc == nil || !fired || end != at {
		// A session that merged into another, or grew, since the timer
		// was set: the session it is part of now has a timer of its own
		// if it has fired.
		return
	}
	j.pairs(eventtime.Window{Start: wk.start, End: end}, acc)
}

// pairs emits the new pairs of a window, in the join's next group.
func (j *WindowJoin[K, L, R]) pairs(w eventtime.Window, a *eventtime.JoinRecords[L, R]) {
	a.Pairs(w, j.group, &j.idx, j.emit)
	j.group++
}

// barrier writes the counters when they changed.
func (j *WindowJoin[K, L, R]) barrier() {
	if j.loaded && j.written != [2]uint64{j.seq, j.group} {
		j.writeMeta(j.st.db())
	}
}

// copyFrom merges the counters of an old store (the windows and their
// timers are copied with the key-group ranges): the highest of each.
func (j *WindowJoin[K, L, R]) copyFrom(old kv.Store, lo, hi int) {
	j.load()
	st := j.st
	seq, group, err := readWindowJoinMeta(old)
	if err != nil {
		st.fail("join: restore", err)
	}
	j.seq, j.group = max(j.seq, seq), max(j.group, group)
	j.writeMeta(st.db())
}

// readMemory reads, after Windows did the windows, the counters of a
// state file of the memory backend's form (a checkpoint of the memory
// backend, or a savepoint), and marks the windows that fired with
// records not emitted yet, as eventtime.WindowJoin's restore does.
func (j *WindowJoin[K, L, R]) readMemory(f storage.StateFile, l *storage.Loaded) {
	j.load()
	st := j.st
	err := l.ReadSections(f, st.start, st.end, func(_ int, sec []byte) error {
		seq, group, ok, err := eventtime.ReadWindowJoinHeader(sec)
		if err != nil || !ok {
			return err
		}
		j.seq, j.group = max(j.seq, seq), max(j.group, group)
		_, _, _, err = eventtime.ReadWindows(sec, j.codec.DecodeKey, j.codec.DecodeValue, func(k K, w eventtime.Window, seq uint64, fired bool, acc *eventtime.JoinRecords[L, R]) error {
			if fired && acc != nil && acc.Pending() {
				j.win.windowTimers().registerSeq(winKey[K]{k, w.Start}, w.End, true, seq)
			}
			return nil
		})
		return err
	})
	if err != nil {
		st.fail("restore", err)
	}
	j.writeMeta(st.db())
}

func (j *WindowJoin[K, L, R]) writeCanonical(kv.Store, int64, *storage.Storage) ([]storage.StateFile, error) {
	return nil, nil // Windows or Sessions write the windows, with the counters
}

func (j *WindowJoin[K, L, R]) close() {}
