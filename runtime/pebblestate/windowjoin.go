package pebblestate

import (
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
)

// WindowJoin is the state of one subtask of a window join on tumbling or
// sliding windows on the pebble backend, with the semantics of
// eventtime.WindowJoin (which the memory backend uses): each key's window
// is a window of Windows, its accumulator the window's records of both
// sides, so that a checkpoint writes the windows that changed since the
// last one and a restore links them.
//
// A window that fired and got records since (within the allowed
// lateness) has a processing-time timer of Windows' at its end, numbered
// with its creation number, which no window otherwise uses: Advance runs
// those first, emitting the new pairs in ascending end, then creation, as
// memory does, then fires the windows the watermark reaches. The next
// arrival number and emission group are written to the store at every
// barrier.
type WindowJoin[K comparable, L, R any] struct {
	win *Windows[K, joinWin[L, R]]

	seq   uint64 // the arrival number of the next record
	group uint64 // the next emission group, from 1
	// loaded is set once the counters are read from the store; written
	// is what the store holds of them.
	loaded  bool
	written [2]uint64

	// Bound once, so that adding a record allocates no closure.
	addL, addR func(*joinWin[L, R])
	markFn     func(K, eventtime.Window, *joinWin[L, R])
	fireFn     func(K, eventtime.Window, *joinWin[L, R])
	dirtyFn    func(winKey[K], int64)
	curL       L
	curR       R
	emit       func(l L, r R, w eventtime.Window)
	idx        []int
	// codec writes the keys and the windows' records.
	codec *state.Codec[K, joinWin[L, R]]
}

// joinWin is a window's records, each side in arrival order.
type joinWin[L, R any] struct {
	ls []joinItem[L]
	rs []joinItem[R]
}

// joinItem is a buffered record: its arrival number, and the group of the
// window's emission that paired it last (0: none yet). Two records whose
// group is the same have been emitted as a pair.
type joinItem[T any] struct {
	seq, group uint64
	v          T
}

// metaWindowJoin is the key of the join's next arrival number and
// emission group.
var metaWindowJoin = []byte{prefixMeta, 'J'}

// OpenWindowJoin opens the windows of subtask t of the window join node,
// empty or restored from the checkpoint the job resumes from (of either
// backend), with assigner a (tumbling or sliding) and allowed lateness in
// milliseconds; c writes the node's keys and left records, encR and decR
// its right records.
func OpenWindowJoin[K comparable, L, R any](t *checkpoint.Task, node int, a eventtime.WindowAssigner, lateness int64, c *state.Codec[K, L], encR func(*codec.Writer, *R), decR func(*codec.Reader) *R) *WindowJoin[K, L, R] {
	j := &WindowJoin[K, L, R]{group: 1}
	wc := &state.Codec[K, joinWin[L, R]]{
		Hash: c.Hash, EncodeKey: c.EncodeKey, DecodeKey: c.DecodeKey,
		EncodeValue: func(w *codec.Writer, a *joinWin[L, R]) {
			writeJoinItems(w, a.ls, c.EncodeValue)
			writeJoinItems(w, a.rs, encR)
		},
		DecodeValue: func(r *codec.Reader) *joinWin[L, R] {
			return &joinWin[L, R]{ls: readJoinItems(r, c.DecodeValue), rs: readJoinItems(r, decR)}
		},
		KeySchema: c.KeySchema, ValueSchema: c.ValueSchema,
	}
	j.codec = wc
	j.win = OpenWindows(t, node, a, lateness, wc)
	j.win.counters = readWindowJoinMeta
	st := j.win.store
	readWindows := st.readMemory
	st.readMemory = func(f storage.StateFile, l *storage.Loaded) {
		readWindows(f, l)
		j.readMemory(f, l)
	}
	st.addPart(j)
	j.addL = func(a *joinWin[L, R]) { a.ls = append(a.ls, joinItem[L]{seq: j.seq, v: j.curL}) }
	j.addR = func(a *joinWin[L, R]) { a.rs = append(a.rs, joinItem[R]{seq: j.seq, v: j.curR}) }
	j.markFn = j.mark
	j.fireFn = func(_ K, w eventtime.Window, a *joinWin[L, R]) { j.pairs(w, a) }
	j.dirtyFn = j.dirty
	return j
}

// SnapshotWindowJoin adds the join j of node to the subtask's snapshot s:
// a checkpoint of its store (Snapshot).
func SnapshotWindowJoin[K comparable, L, R any](s *checkpoint.Snapshot, node int, j *WindowJoin[K, L, R]) {
	Snapshot(s, node, j.win.store)
}

func (j *WindowJoin[K, L, R]) load() {
	if j.loaded {
		return
	}
	j.loaded = true
	seq, group, err := readWindowJoinMeta(j.win.store.db)
	if err != nil {
		j.win.store.fail("join: read", err)
	}
	j.seq, j.group = max(j.seq, seq), max(j.group, group)
	j.written = [2]uint64{seq, group}
}

// readWindowJoinMeta reads the next arrival number and emission group in
// db (0 and 0 when it has none).
func readWindowJoinMeta(db pebble.Reader) (seq, group uint64, err error) {
	v, closer, err := db.Get(metaWindowJoin)
	if errors.Is(err, pebble.ErrNotFound) {
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

func (j *WindowJoin[K, L, R]) writeMeta(db *pebble.DB) {
	var w codec.Writer
	w.Uvarint(j.seq)
	w.Uvarint(j.group)
	if err := db.Set(metaWindowJoin, w.Bytes(), pebble.NoSync); err != nil {
		j.win.store.fail("join: write", err)
	}
	j.written = [2]uint64{j.seq, j.group}
}

// Len is the number of open windows. It reads them all.
func (j *WindowJoin[K, L, R]) Len() int { return j.win.store.Len() }

// Watermark is the largest watermark Advance has seen.
func (j *WindowJoin[K, L, R]) Watermark() int64 { return j.win.Watermark() }

// AddLeft buffers a left record of key k at time ts in its windows. It
// returns false when all of them are late for it.
func (j *WindowJoin[K, L, R]) AddLeft(k K, l L, ts, inputWatermark int64) bool {
	j.load()
	j.curL = l
	ok := j.win.Add(k, ts, inputWatermark, j.addL, j.markFn)
	var zero L
	j.curL = zero
	j.seq++
	return ok
}

// AddRight buffers a right record, like AddLeft.
func (j *WindowJoin[K, L, R]) AddRight(k K, r R, ts, inputWatermark int64) bool {
	j.load()
	j.curR = r
	ok := j.win.Add(k, ts, inputWatermark, j.addR, j.markFn)
	var zero R
	j.curR = zero
	j.seq++
	return ok
}

// mark notes that a window that fired got a record: its processing-time
// timer at its end (once).
func (j *WindowJoin[K, L, R]) mark(k K, w eventtime.Window, _ *joinWin[L, R]) {
	wk := winKey[K]{k, w.Start}
	v := j.win.store.Get(wk)
	j.win.timers.registerSeq(wk, w.End, true, v.seq)
}

// Advance emits the new pairs of windows that fired before and got records
// since; then it moves the combined watermark to wm, emitting the pairs of
// every window that fires, and drops windows past their lateness.
func (j *WindowJoin[K, L, R]) Advance(wm int64, emit func(l L, r R, w eventtime.Window)) {
	j.load()
	j.emit = emit
	j.win.timers.AdvanceProcessing(math.MaxInt64, j.dirtyFn)
	j.win.Advance(wm, j.fireFn)
	j.emit = nil
}

// dirty emits the new pairs of a window that fired and got records since.
func (j *WindowJoin[K, L, R]) dirty(wk winKey[K], _ int64) {
	v := j.win.store.Get(wk)
	if v == nil {
		j.win.store.fail("join", fmt.Errorf("%w: window %d of key %v has new records, but the store does not hold it", codec.ErrCorrupt, wk.start, wk.k))
	}
	j.pairs(eventtime.Window{Start: wk.start, End: v.end}, &v.acc)
}

// pairs emits the pairs of a window's records that have not been emitted,
// then puts all of them in a new group (as eventtime.WindowJoin does).
func (j *WindowJoin[K, L, R]) pairs(w eventtime.Window, a *joinWin[L, R]) {
	g := j.group
	j.group++
	cached := uint64(0) // the group j.idx holds the rest of
	for li := range a.ls {
		l := &a.ls[li]
		if l.group == 0 {
			for ri := range a.rs {
				j.emit(l.v, a.rs[ri].v, w)
			}
		} else {
			if l.group != cached {
				// The right records l has not met: those of other groups.
				j.idx = j.idx[:0]
				for ri := range a.rs {
					if a.rs[ri].group != l.group {
						j.idx = append(j.idx, ri)
					}
				}
				cached = l.group
			}
			for _, ri := range j.idx {
				j.emit(l.v, a.rs[ri].v, w)
			}
		}
		l.group = g
	}
	for ri := range a.rs {
		a.rs[ri].group = g
	}
}

// barrier writes the counters when they changed.
func (j *WindowJoin[K, L, R]) barrier() {
	if j.loaded && j.written != [2]uint64{j.seq, j.group} {
		j.writeMeta(j.win.store.db)
	}
}

// copyFrom merges the counters of an old store (the windows and their
// timers are copied with the key-group ranges): the highest of each.
func (j *WindowJoin[K, L, R]) copyFrom(old *pebble.DB, lo, hi int) {
	j.load()
	seq, group, err := readWindowJoinMeta(old)
	if err != nil {
		j.win.store.fail("join: restore", err)
	}
	j.seq, j.group = max(j.seq, seq), max(j.group, group)
	j.writeMeta(j.win.store.db)
}

// readMemory reads, after Windows did the windows, the counters of a
// state file of the memory backend's form (a checkpoint of the memory
// backend, or a savepoint), and marks the windows that fired with
// records not emitted yet, as eventtime.WindowJoin's restore does.
func (j *WindowJoin[K, L, R]) readMemory(f storage.StateFile, l *storage.Loaded) {
	j.load()
	st := j.win.store
	r, err := l.Open(f)
	if err != nil {
		st.fail("restore", err)
	}
	for kg, sec, ok := r.Next(); ok; kg, sec, ok = r.Next() {
		if kg < st.start || kg >= st.end {
			continue
		}
		seq, group, ok, err := eventtime.ReadWindowJoinHeader(sec)
		if err == nil && ok {
			j.seq, j.group = max(j.seq, seq), max(j.group, group)
			_, _, _, err = eventtime.ReadWindows(sec, j.codec.DecodeKey, j.codec.DecodeValue, func(k K, w eventtime.Window, seq uint64, fired bool, acc *joinWin[L, R]) error {
				if fired && acc != nil && acc.pending() {
					j.win.timers.registerSeq(winKey[K]{k, w.Start}, w.End, true, seq)
				}
				return nil
			})
		}
		if err != nil {
			r.Close()
			st.fail(fmt.Sprintf("restore %s, key group %d", f.Name, kg), err)
		}
	}
	if err := r.Close(); err != nil {
		st.fail("restore", err)
	}
	j.writeMeta(st.db)
}

// pending reports whether a record has not been emitted yet.
func (a *joinWin[L, R]) pending() bool {
	for i := range a.ls {
		if a.ls[i].group == 0 {
			return true
		}
	}
	for i := range a.rs {
		if a.rs[i].group == 0 {
			return true
		}
	}
	return false
}

// The window's records as eventtime.WindowJoin writes them: a count, then
// per record, nested, its arrival number, its group and the record.

func writeJoinItems[T any](w *codec.Writer, items []joinItem[T], enc func(*codec.Writer, *T)) {
	w.Uvarint(uint64(len(items)))
	for i := range items {
		m := w.Begin()
		w.Uvarint(items[i].seq)
		w.Uvarint(items[i].group)
		enc(w, &items[i].v)
		w.End(m)
	}
}

func readJoinItems[T any](r *codec.Reader, dec func(*codec.Reader) *T) []joinItem[T] {
	n := r.Count()
	if n == 0 {
		return nil
	}
	items := make([]joinItem[T], 0, n)
	for range n {
		ir := r.Nested()
		it := joinItem[T]{seq: ir.Uvarint(), group: ir.Uvarint()}
		v := dec(ir)
		if ir.Err() != nil {
			return nil
		}
		if len(items) > 0 && items[len(items)-1].seq >= it.seq {
			ir.Fail("buffered records out of order")
			return nil
		}
		if v != nil {
			it.v = *v
		}
		items = append(items, it)
	}
	return items
}

func (j *WindowJoin[K, L, R]) writeCanonical(*pebble.DB, int64, *storage.Storage) ([]storage.StateFile, error) {
	return nil, nil // Windows writes the windows, with the counters
}

func (j *WindowJoin[K, L, R]) close() {}
