package eventtime

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

// IntervalJoin is the state of one subtask of an interval join of two
// keyed inputs: a left record l and a right record r of the same key join
// when l.TS+lower <= r.TS <= l.TS+upper. A pair is emitted as soon as its
// second record arrives, with the larger of the two timestamps; the
// arriving record meets the other side's buffered records in ascending
// timestamp, equal timestamps in arrival order.
//
// A record is late when its timestamp is at or before the watermark of its
// input: the caller sends it to the side output. Every record that is not
// late is buffered until Advance's watermark shows that no later record of
// the other side can match it, so every pair of records that are not late
// is emitted exactly once.
type IntervalJoin[K comparable, L, R any] struct {
	lower, upper int64
	wm           int64
	restored     bool
	keys         map[K]*ijKey[K, L, R]
	// heap holds every key with buffered records, at the earliest time
	// one of them can be dropped.
	heap timeHeap[*ijKey[K, L, R]]
	n    int
}

type ijKey[K comparable, L, R any] struct {
	heapSlot
	key K
	// left and right are in ascending TS, equal TS in arrival order.
	left  []Timed[L]
	right []Timed[R]
}

// NewIntervalJoin returns an empty interval join of right records with
// timestamps in [left.TS+lower, left.TS+upper]. It panics when lower >
// upper: the compiler checks the bounds.
func NewIntervalJoin[K comparable, L, R any](lower, upper int64) *IntervalJoin[K, L, R] {
	if lower > upper {
		panic(fmt.Sprintf("interval join bounds [%d, %d] are empty", lower, upper))
	}
	return &IntervalJoin[K, L, R]{lower: lower, upper: upper, wm: MinTime, keys: make(map[K]*ijKey[K, L, R])}
}

// Len is the number of buffered records.
func (j *IntervalJoin[K, L, R]) Len() int { return j.n }

// Watermark is the largest watermark Advance has seen (after a restore, the
// snapshot's), MinTime at first.
func (j *IntervalJoin[K, L, R]) Watermark() int64 { return j.wm }

// leftDrop is when a left record at ts can no longer match: right records
// to come are later than the watermark.
func (j *IntervalJoin[K, L, R]) leftDrop(ts int64) int64 { return addSat(ts, j.upper) }

// rightDrop is when a right record at ts can no longer match.
func (j *IntervalJoin[K, L, R]) rightDrop(ts int64) int64 { return subSat(ts, j.lower) }

// AddLeft joins a left record of key k at time ts with the buffered right
// records, calling emit for each pair, and buffers it. It returns false,
// and changes nothing, when the record is late: ts <= inputWatermark.
func (j *IntervalJoin[K, L, R]) AddLeft(k K, l L, ts, inputWatermark int64, emit func(l L, r R, ts int64)) bool {
	if ts <= max(inputWatermark, j.wm) {
		return false
	}
	ks := j.keys[k]
	if ks != nil {
		lo, hi := addSat(ts, j.lower), addSat(ts, j.upper)
		for i := firstAtOrAfter(ks.right, lo); i < len(ks.right) && ks.right[i].TS <= hi; i++ {
			emit(l, ks.right[i].V, max(ts, ks.right[i].TS))
		}
	}
	if j.leftDrop(ts) > j.wm {
		ks = j.key(k, ks)
		ks.left = insertTimed(ks.left, Timed[L]{TS: ts, V: l})
		j.n++
		j.reschedule(ks)
	}
	return true
}

// AddRight joins a right record with the buffered left records, like
// AddLeft.
func (j *IntervalJoin[K, L, R]) AddRight(k K, r R, ts, inputWatermark int64, emit func(l L, r R, ts int64)) bool {
	if ts <= max(inputWatermark, j.wm) {
		return false
	}
	ks := j.keys[k]
	if ks != nil {
		// l.TS in [ts-upper, ts-lower]
		lo, hi := subSat(ts, j.upper), subSat(ts, j.lower)
		for i := firstAtOrAfter(ks.left, lo); i < len(ks.left) && ks.left[i].TS <= hi; i++ {
			emit(ks.left[i].V, r, max(ts, ks.left[i].TS))
		}
	}
	if j.rightDrop(ts) > j.wm {
		ks = j.key(k, ks)
		ks.right = insertTimed(ks.right, Timed[R]{TS: ts, V: r})
		j.n++
		j.reschedule(ks)
	}
	return true
}

// key returns ks, or a new key state for k in the map and the heap.
func (j *IntervalJoin[K, L, R]) key(k K, ks *ijKey[K, L, R]) *ijKey[K, L, R] {
	if ks != nil {
		return ks
	}
	ks = &ijKey[K, L, R]{key: k}
	ks.at = MaxTime
	j.keys[k] = ks
	j.heap.push(ks)
	return ks
}

// reschedule puts ks at the time its earliest record can be dropped.
func (j *IntervalJoin[K, L, R]) reschedule(ks *ijKey[K, L, R]) {
	at := MaxTime
	if len(ks.left) > 0 {
		at = j.leftDrop(ks.left[0].TS)
	}
	if len(ks.right) > 0 {
		at = min(at, j.rightDrop(ks.right[0].TS))
	}
	if at != ks.at {
		ks.at = at
		j.heap.fix(ks.hi)
	}
}

// Advance moves the combined watermark to wm and drops the buffered
// records that no record to come can match. It costs next to nothing when
// none can be dropped.
func (j *IntervalJoin[K, L, R]) Advance(wm int64) {
	j.wm = max(j.wm, wm)
	wm = j.wm
	for len(j.heap) > 0 && j.heap[0].at <= wm {
		ks := j.heap[0]
		n := 0
		for n < len(ks.left) && j.leftDrop(ks.left[n].TS) <= wm {
			n++
		}
		ks.left = dropFront(ks.left, n)
		j.n -= n
		n = 0
		for n < len(ks.right) && j.rightDrop(ks.right[n].TS) <= wm {
			n++
		}
		ks.right = dropFront(ks.right, n)
		j.n -= n
		if len(ks.left) == 0 && len(ks.right) == 0 {
			j.heap.remove(0)
			delete(j.keys, ks.key)
			continue
		}
		j.reschedule(ks)
	}
}

// Snapshot writes the buffered records into the section of their key's
// group: per key, the key (encK), then the left records (time and encL),
// then the right ones (time and encR), in their order.
func (j *IntervalJoin[K, L, R]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encL func(*codec.Writer, *L), encR func(*codec.Writer, *R)) error {
	writeSectionHeaders(sec, sectionHeader{wm: j.wm})
	for k, ks := range j.keys {
		w, err := keySection(sec, keyGroup, k)
		if err != nil {
			return err
		}
		m := w.Begin()
		encK(w, k)
		writeTimed(w, ks.left, encL)
		writeTimed(w, ks.right, encR)
		w.End(m)
	}
	return nil
}

// Restore adds the buffered records of one key group's section to a join
// that holds none of its keys.
func (j *IntervalJoin[K, L, R]) Restore(section []byte, decK func(*codec.Reader) K, decL func(*codec.Reader) *L, decR func(*codec.Reader) *R) error {
	wm, ok, err := ReadIntervalJoin(section, decK, decL, decR, func(k K, left []Timed[L], right []Timed[R]) error {
		if _, dup := j.keys[k]; dup {
			return fmt.Errorf("%w: key %v restored twice", codec.ErrCorrupt, k)
		}
		if len(left)+len(right) == 0 {
			return nil
		}
		ks := j.key(k, nil)
		ks.left, ks.right = left, right
		j.n += len(left) + len(right)
		j.reschedule(ks)
		return nil
	})
	if ok {
		j.wm = restoredWatermark(j.wm, !j.restored, wm)
		j.restored = true
	}
	return err
}

func writeTimed[T any](w *codec.Writer, recs []Timed[T], enc func(*codec.Writer, *T)) {
	w.Uvarint(uint64(len(recs)))
	for i := range recs {
		m := w.Begin()
		w.Varint(recs[i].TS)
		enc(w, &recs[i].V)
		w.End(m)
	}
}

// readTimed reads what writeTimed wrote. With sorted (a join's buffer,
// which lookups search by time) records out of time order are corrupt; a
// count window keeps its records in arrival order, whatever their times.
func readTimed[T any](r *codec.Reader, dec func(*codec.Reader) *T, sorted bool) []Timed[T] {
	n := r.Count()
	if n == 0 {
		return nil
	}
	recs := make([]Timed[T], 0, n)
	for range n {
		rr := r.Nested()
		ts := rr.Varint()
		v := dec(rr)
		if rr.Err() != nil {
			return nil
		}
		if sorted && len(recs) > 0 && recs[len(recs)-1].TS > ts {
			rr.Fail("buffered records out of order")
			return nil
		}
		t := Timed[T]{TS: ts}
		if v != nil {
			t.V = *v
		}
		recs = append(recs, t)
	}
	return recs
}

// firstAtOrAfter is the index of the first record at or after ts.
func firstAtOrAfter[T any](recs []Timed[T], ts int64) int {
	lo, hi := 0, len(recs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if recs[m].TS < ts {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// insertTimed inserts t after the records at or before its time.
func insertTimed[T any](recs []Timed[T], t Timed[T]) []Timed[T] {
	if len(recs) == 0 || recs[len(recs)-1].TS <= t.TS {
		return append(recs, t)
	}
	return slices.Insert(recs, firstAtOrAfter(recs, t.TS+1), t)
}

// dropFront removes the first n records, clearing them so that what they
// point to can be collected.
func dropFront[T any](recs []Timed[T], n int) []Timed[T] {
	if n == 0 {
		return recs
	}
	clear(recs[:n])
	if n == len(recs) {
		return recs[:0]
	}
	return recs[n:]
}

// WindowJoin is the state of one subtask of a window join of two keyed
// inputs: it buffers the records of both sides per key and window (from a
// WindowAssigner; session windows merge over the records of both sides),
// and when a window fires it emits every pair (l, r) of its records, in
// arrival order of l, then of r.
//
// Lateness is as in WindowState. A record that arrives within the allowed
// lateness for a window that has fired already makes new pairs only: they
// are emitted by the next Advance, before the windows that Advance fires,
// so that every pair is emitted once per window. (When a session that had
// fired merges into a larger one, the pairs it emitted are not emitted
// again: the larger session emits the others.) Windows with pending pairs
// emit them in ascending window end, then creation order.
type WindowJoin[K comparable, L, R any] struct {
	ws    *WindowState[K, JoinRecords[L, R]]
	seq   uint64 // the arrival number of the next record
	group uint64 // the next emission group, from 1
	// dirty holds fired windows that got records since they emitted, a
	// window more than once when records came to others in between:
	// Advance emits what is pending (JoinRecords.Pending) once.
	dirty []winRef[K, JoinRecords[L, R]]
	due   []dueWindow[L, R]

	// Bound once, so that adding a record allocates no closure.
	addL, addR func(*JoinRecords[L, R])
	markFn     func(winRef[K, JoinRecords[L, R]])
	fireFn     func(K, Window, *JoinRecords[L, R])
	curL       L
	curR       R
	emit       func(l L, r R, w Window)
	idx        []int
}

// JoinRecords is a window's buffered records, each side in arrival
// order: the accumulator of a window join's windows on either backend
// (WindowJoin here, pebblestate.WindowJoin), and so the one definition of
// how they pair, merge and are written.
//
// It is two slices, 48 bytes a window of a key in its pane's array. A
// flag for "listed in WindowJoin.dirty" made it 56; the records pending
// (Pending) say what it said. Without it Nexmark q8 (20M events) peaked
// at 130 MiB instead of 149 at p=1 and 137 instead of 147 at p=2, for
// 0.98 and 0.97 of the CPU (8 pairs each; the command is in
// examples/nexmark/README.md, the thirty-second session's entry).
type JoinRecords[L, R any] struct {
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

// AddLeft buffers left record l, arrival number seq.
func (a *JoinRecords[L, R]) AddLeft(seq uint64, l L) {
	a.ls = append(a.ls, joinItem[L]{seq: seq, v: l})
}

// AddRight buffers right record r, arrival number seq.
func (a *JoinRecords[L, R]) AddRight(seq uint64, r R) {
	a.rs = append(a.rs, joinItem[R]{seq: seq, v: r})
}

// NewWindowJoin returns an empty window join. It panics on an invalid
// assigner or a negative lateness: the compiler checks them.
func NewWindowJoin[K comparable, L, R any](a WindowAssigner, lateness int64) *WindowJoin[K, L, R] {
	j := &WindowJoin[K, L, R]{group: 1}
	var merge func(dst, src *JoinRecords[L, R])
	if a.Kind == Session {
		merge = MergeJoinRecords[L, R]
	}
	j.ws = NewWindowState[K, JoinRecords[L, R]](a, lateness, merge)
	j.ws.stampFired = true
	j.addL = func(a *JoinRecords[L, R]) { a.AddLeft(j.seq, j.curL) }
	j.addR = func(a *JoinRecords[L, R]) { a.AddRight(j.seq, j.curR) }
	j.markFn = j.mark
	j.fireFn = j.fire
	return j
}

// Len is the number of open windows.
func (j *WindowJoin[K, L, R]) Len() int { return j.ws.Len() }

// Watermark is the largest watermark Advance has seen.
func (j *WindowJoin[K, L, R]) Watermark() int64 { return j.ws.Watermark() }

// AddLeft buffers a left record of key k at time ts in its windows. It
// returns false when all of them are late for it (see WindowState.Add).
func (j *WindowJoin[K, L, R]) AddLeft(k K, l L, ts, inputWatermark int64) bool {
	j.curL = l
	ok := j.ws.add(k, ts, inputWatermark, j.addL, nil, j.markFn, nil)
	var zero L
	j.curL = zero
	j.seq++
	return ok
}

// AddRight buffers a right record, like AddLeft.
func (j *WindowJoin[K, L, R]) AddRight(k K, r R, ts, inputWatermark int64) bool {
	j.curR = r
	ok := j.ws.add(k, ts, inputWatermark, j.addR, nil, j.markFn, nil)
	var zero R
	j.curR = zero
	j.seq++
	return ok
}

func (j *WindowJoin[K, L, R]) mark(ref winRef[K, JoinRecords[L, R]]) {
	if n := len(j.dirty); n > 0 && j.dirty[n-1] == ref {
		return // late records of one window in a row
	}
	j.dirty = append(j.dirty, ref)
}

// dueWindow is a fired window with pairs to emit.
type dueWindow[L, R any] struct {
	w   Window
	seq uint64
	acc *JoinRecords[L, R]
}

// Advance emits the new pairs of windows that fired before and got records
// since; then it moves the combined watermark to wm, emitting the pairs of
// every window that fires (see WindowState.Advance), and drops windows
// past their lateness.
func (j *WindowJoin[K, L, R]) Advance(wm int64, emit func(l L, r R, w Window)) {
	j.emit = emit
	if len(j.dirty) > 0 {
		for _, ref := range j.dirty {
			if ref.dropped() {
				continue
			}
			w, seq, fired, acc := j.ws.resolve(ref)
			if fired && acc.Pending() {
				j.due = append(j.due, dueWindow[L, R]{w, seq, acc})
				// Its records are about to take the emission's group:
				// the next delta holds the window as it is after.
				j.ws.touch(ref)
			}
		}
		slices.SortFunc(j.due, func(a, b dueWindow[L, R]) int {
			return cmp.Or(cmp.Compare(a.w.End, b.w.End), cmp.Compare(a.seq, b.seq))
		})
		for _, d := range j.due {
			if d.acc.Pending() { // not a window listed twice, emitted
				j.pairs(d.w, d.acc)
			}
		}
		clear(j.dirty)
		j.dirty = j.dirty[:0]
		clear(j.due)
		j.due = j.due[:0]
	}
	j.ws.Advance(wm, j.fireFn)
	j.emit = nil
}

func (j *WindowJoin[K, L, R]) fire(_ K, w Window, a *JoinRecords[L, R]) {
	j.pairs(w, a)
}

// pairs emits the new pairs of a window, in the join's next group.
func (j *WindowJoin[K, L, R]) pairs(w Window, a *JoinRecords[L, R]) {
	a.Pairs(w, j.group, &j.idx, j.emit)
	j.group++
}

// Pairs emits the pairs of window w's records that have not been
// emitted, then puts all of them in emission group g, a group none of
// them is in (a join's groups count up). idx is scratch space, kept by
// the caller so that emitting allocates nothing.
func (a *JoinRecords[L, R]) Pairs(w Window, g uint64, idx *[]int, emit func(l L, r R, w Window)) {
	cached := uint64(0) // the group *idx holds the rest of
	for li := range a.ls {
		l := &a.ls[li]
		if l.group == 0 {
			for ri := range a.rs {
				emit(l.v, a.rs[ri].v, w)
			}
		} else {
			if l.group != cached {
				// The right records l has not met: those of other groups.
				*idx = (*idx)[:0]
				for ri := range a.rs {
					if a.rs[ri].group != l.group {
						*idx = append(*idx, ri)
					}
				}
				cached = l.group
			}
			for _, ri := range *idx {
				emit(l.v, a.rs[ri].v, w)
			}
		}
		l.group = g
	}
	for ri := range a.rs {
		a.rs[ri].group = g
	}
}

// MergeJoinRecords merges two sessions' records into dst, each side in
// arrival order.
func MergeJoinRecords[L, R any](dst, src *JoinRecords[L, R]) {
	dst.ls = mergeItems(dst.ls, src.ls)
	dst.rs = mergeItems(dst.rs, src.rs)
	src.ls, src.rs = nil, nil
}

func mergeItems[T any](a, b []joinItem[T]) []joinItem[T] {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 || a[len(a)-1].seq < b[0].seq {
		return append(a, b...)
	}
	out := make([]joinItem[T], 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].seq < b[0].seq {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// Snapshot writes every open window into the section of its key's group:
// per key, the key (encK), then its windows, each with its bounds, whether
// it fired, and its records (arrival number, emission group, and encL or
// encR).
func (j *WindowJoin[K, L, R]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encL func(*codec.Writer, *L), encR func(*codec.Writer, *R)) error {
	encA := func(w *codec.Writer, a *JoinRecords[L, R]) { a.Encode(w, encL, encR) }
	return j.ws.snapshot(sec, keyGroup, encK, encA, sectionHeader{seq2: j.seq, group: j.group})
}

// Incremental reports whether SnapshotDelta can write deltas: tumbling and
// sliding windows, not sessions (WindowState.Incremental).
func (j *WindowJoin[K, L, R]) Incremental() bool { return j.ws.Incremental() }

// Epoch is the epoch the next SnapshotDelta ends.
func (j *WindowJoin[K, L, R]) Epoch() uint64 { return j.ws.Epoch() }

// Track makes the join list its changes from now on: a delta may be
// taken on top of the files it was restored from.
func (j *WindowJoin[K, L, R]) Track() { j.ws.Track() }

// SnapshotDelta writes the windows as d says, as WindowState.SnapshotDelta
// does: every open one (as Snapshot does), or those whose records changed
// after epoch d.Since: a window changes when it gets a record, when it
// fires and when it emits the pairs of records that came after it fired
// (the records' emission groups). It ends the epoch and returns it. The
// sections' headers hold the join's counters, as Snapshot's do.
func (j *WindowJoin[K, L, R]) SnapshotDelta(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encL func(*codec.Writer, *L), encR func(*codec.Writer, *R), d Delta) (uint64, error) {
	if d.Full {
		if err := j.Snapshot(sec, keyGroup, encK, encL, encR); err != nil {
			return 0, err
		}
		return j.ws.closeEpoch(), nil
	}
	if !j.ws.Incremental() {
		return 0, fmt.Errorf("session windows of a join cannot be written as a delta")
	}
	c := j.ws.capturePanes(false, d.Since, false)
	c.h.seq2, c.h.group = j.seq, j.group
	if err := c.Encode(sec, keyGroup, encK, func(w *codec.Writer, a *JoinRecords[L, R]) { a.Encode(w, encL, encR) }); err != nil {
		return 0, err
	}
	return j.ws.closeEpoch(), nil
}

// RestoreSection adds the windows of one key group's section of a full
// file, or applies a delta's (delta set), as WindowState.RestoreSection
// does; the files of each subtask of the checkpoint are ended by
// EndChain.
func (j *WindowJoin[K, L, R]) RestoreSection(section []byte, delta bool, decK func(*codec.Reader) K, decL func(*codec.Reader) *L, decR func(*codec.Reader) *R) error {
	arrival, group, ok, err := ReadWindowJoinHeader(section)
	if err != nil {
		return err
	}
	if ok {
		j.seq = max(j.seq, arrival)
		j.group = max(j.group, group)
	}
	return j.ws.RestoreSection(section, delta, decK, func(r *codec.Reader) *JoinRecords[L, R] { return DecodeJoinRecords(r, decL, decR) })
}

// EndChain ends the files of one subtask of the checkpoint being restored
// (RestoreSection). The windows that fired and hold records not emitted
// yet emit them at the next Advance, as after Restore: which windows
// those are is known only once a chain's deltas have been applied.
func (j *WindowJoin[K, L, R]) EndChain() error {
	if err := j.ws.EndChain(); err != nil {
		return err
	}
	for _, p := range j.ws.panes {
		for i, k := range p.keys {
			if acc := &p.accs[i]; (p.fired || p.early[int32(i)]) && acc.Pending() {
				j.mark(winRef[K, JoinRecords[L, R]]{p: p, k: k})
			}
		}
	}
	return nil
}

// Restore adds the windows of one key group's section to a join that holds
// none of its keys.
func (j *WindowJoin[K, L, R]) Restore(section []byte, decK func(*codec.Reader) K, decL func(*codec.Reader) *L, decR func(*codec.Reader) *R) error {
	decA := func(r *codec.Reader) *JoinRecords[L, R] { return DecodeJoinRecords(r, decL, decR) }
	h, err := j.ws.restore(section, decK, decA, func(ref winRef[K, JoinRecords[L, R]], fired bool, acc *JoinRecords[L, R]) {
		if fired && acc.Pending() {
			j.mark(ref)
		}
	})
	j.seq = max(j.seq, h.seq2)
	j.group = max(j.group, h.group)
	return err
}

// Pending reports whether a record has not been emitted yet. It looks
// from the newest record back: a late record that makes a fired window
// pending is its side's last.
func (a *JoinRecords[L, R]) Pending() bool {
	for i := len(a.ls) - 1; i >= 0; i-- {
		if a.ls[i].group == 0 {
			return true
		}
	}
	for i := len(a.rs) - 1; i >= 0; i-- {
		if a.rs[i].group == 0 {
			return true
		}
	}
	return false
}

// Encode writes the records, the left ones (encL) and then the right ones
// (encR): per side a count, then per record, nested, its arrival number,
// its group and the record. It is a window's accumulator in the state
// files of both backends.
func (a *JoinRecords[L, R]) Encode(w *codec.Writer, encL func(*codec.Writer, *L), encR func(*codec.Writer, *R)) {
	writeItems(w, a.ls, encL)
	writeItems(w, a.rs, encR)
}

// DecodeJoinRecords reads what Encode wrote; a side out of arrival order
// fails r.
func DecodeJoinRecords[L, R any](r *codec.Reader, decL func(*codec.Reader) *L, decR func(*codec.Reader) *R) *JoinRecords[L, R] {
	return &JoinRecords[L, R]{ls: readItems(r, decL), rs: readItems(r, decR)}
}

func writeItems[T any](w *codec.Writer, items []joinItem[T], enc func(*codec.Writer, *T)) {
	w.Uvarint(uint64(len(items)))
	for i := range items {
		m := w.Begin()
		w.Uvarint(items[i].seq)
		w.Uvarint(items[i].group)
		enc(w, &items[i].v)
		w.End(m)
	}
}

func readItems[T any](r *codec.Reader, dec func(*codec.Reader) *T) []joinItem[T] {
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
