package eventtime

import (
	"fmt"
	"math/bits"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/invariants"
	"github.com/pipegen/pipegen/runtime/state"
)

// TimerService holds the timers of one subtask of a process operator: per
// key, event-time timers (run when the watermark reaches their time) and
// processing-time timers (run when the wall clock does). A timer is a key,
// a time and a domain; registering one that exists already does nothing, so
// it runs once.
//
// Due timers run in ascending time, timers of equal time in the order they
// were registered (kept by snapshots; after a restore that merged several
// subtasks' snapshots, timers of equal time registered by different subtasks
// run in an unspecified order).
//
// A key's timers have a record (keyTimers), in a slab of records that
// its heap entries give the number of: a due timer is checked and unset
// without a lookup by key. The record's number is kept with the key's
// state, in the aux word of its entry (state.Memory.GetOrAddRef;
// KeepWith), where the process function's call has just looked the key
// up: registering a timer then costs no lookup either. Only records whose
// key has no state entry (cleared while it had timers, or restored) are
// in a map by key, loose. Numbers, not pointers: records and heap
// entries cost the garbage collector nothing (pointers made q4's
// collections 10% of its CPU, every swap in the heap a write barrier).
type TimerService[K comparable] struct {
	// recs are the records, by number; free lists the numbers of
	// records not in use.
	recs recList[K]
	free []uint32
	// loose numbers the records not kept with a state entry, by key. A
	// key has at most one record with timers, there or in its entry.
	loose map[K]uint32
	// more holds the timers of keys that have more than one, but for the
	// one in the key's record, by (key, time, domain): most keys have one
	// timer at a time. A timer is in a record or in more, never both.
	more map[timerID[K]]timerRec
	// kept is set once KeepWith has been called: then every key's
	// timers are registered and deleted with its entry's aux word.
	kept bool
	// The heaps of each domain hold an entry per timer set, by time and
	// registration number, and entries of timers deleted since (stale:
	// their timer is not set any more), which are skipped when they come
	// up and compacted away when they outnumber the rest.
	event      timerHeap
	processing timerHeap
	n          int    // timers set
	stale      int    // stale heap entries
	seq        uint64 // the registration number of the next timer
	// log lists the timers registered and the timers gone (deleted or
	// run) in each epoch, for deltas (changes.go).
	log changeLog[K]
}

type timerID[K comparable] struct {
	key        K
	at         int64
	processing bool
}

// timerRec is a timer that is set.
type timerRec struct {
	at  int64
	seq uint64 // the registration number, unique
	// born is the epoch the timer was registered in.
	born uint64
	// processing is the domain: processing time, or event time.
	processing bool
	// listed is 1 + the place of the timer's registration in the list
	// of changes of epoch born (changeLog.add), 0 when not listed: a
	// timer deleted or run in the epoch it was registered in is taken
	// off the list (gone), not listed twice.
	listed uint32
}

// keyTimers is the record of a key's timers: up to two of them, in, and
// the number of its others, in more. Two: a key of q4 at parallelism 2
// often has the timer of its early bids and its auction's.
type keyTimers[K comparable] struct {
	key K
	in  [2]timerRec
	nIn uint8 // the number of timers in in
	// attached is set while a state entry's aux word holds the record's
	// number (it is not in loose then).
	attached bool
	more     int32
	// gen counts the times the record was freed: a heap entry or a
	// change of an earlier use of the record is not about its timers,
	// even with the same registration number (numbers restored from
	// several subtasks' checkpoints may be equal).
	gen uint32
}

// empty reports whether r holds no timer.
func (r *keyTimers[K]) empty() bool { return r.nIn == 0 && r.more == 0 }

// find returns the index in r.in of the timer at time at in a domain, or
// -1.
func (r *keyTimers[K]) find(at int64, processing bool) int {
	for j := range r.nIn {
		if r.in[j].at == at && r.in[j].processing == processing {
			return int(j)
		}
	}
	return -1
}

// timerChange is a timer registered (gone unset) or deleted or run, in
// the epoch it is listed in: its key, and the number of the record it was
// in (which may hold another key's timers by the time the change is
// written: the key tells).
type timerChange[K comparable] struct {
	key      K
	rec, gen uint32
	timerRec
	gone bool
	// void marks a change taken off the list (gone).
	void bool
}

// NewTimerService returns a service without timers.
func NewTimerService[K comparable]() *TimerService[K] {
	return &TimerService[K]{loose: make(map[K]uint32), log: changeLog[K]{epoch: 1}}
}

// auxKeeper is a keyed state that keeps a word per key for its timers:
// state.Memory.
type auxKeeper[K comparable] interface {
	OnDeleteAux(func(K, uint64))
}

// KeepWith makes the service keep each key's timers with the key's entry
// in s: from now on timers are registered and deleted only through a
// ProcessContext whose calls BeginIn and BeginTimerIn give it the entry's
// aux word (state.Memory.GetOrAddRef). When s deletes an entry whose key
// still has timers, they move to loose.
func (t *TimerService[K]) KeepWith(s auxKeeper[K]) {
	t.kept = true
	s.OnDeleteAux(t.detach)
}

// detach takes the record numbered aux-1 of key k from the state entry
// that s deletes.
func (t *TimerService[K]) detach(k K, aux uint64) {
	i := uint32(aux - 1)
	r := t.recs.at(i)
	r.attached = false
	if r.empty() {
		t.release(i)
	} else {
		t.loose[k] = i
	}
}

// newRecord returns the number of a new record of k.
func (t *TimerService[K]) newRecord(k K) uint32 {
	if n := len(t.free); n > 0 {
		i := t.free[n-1]
		t.free = t.free[:n-1]
		r := t.recs.at(i)
		*r = keyTimers[K]{key: k, gen: r.gen}
		return i
	}
	return t.recs.add(keyTimers[K]{key: k})
}

// recList holds the records of a timer service in chunks of recChunk,
// so that it grows without copying. As one array grown by append, a
// burst of a million keys that each set a timer (a process operator
// taking a window's results) took 1.5-2 s in BenchmarkTimersManyKeys:
// each growth copied every record into fresh pages, and a third of the
// time was the collector spinning and signalling for the goroutine
// inside those copies, which it cannot stop.
type recList[K comparable] struct {
	chunks [][]keyTimers[K]
	n      int
}

// recChunk is the number of records in a chunk: some 88 KiB of them for
// integer keys.
const recChunk = 1024

// at returns record i.
func (l *recList[K]) at(i uint32) *keyTimers[K] {
	return &l.chunks[i/recChunk][i%recChunk]
}

// add appends r and returns its number.
func (l *recList[K]) add(r keyTimers[K]) uint32 {
	i := uint32(l.n)
	if l.n%recChunk == 0 {
		l.chunks = append(l.chunks, make([]keyTimers[K], recChunk))
	}
	*l.at(i) = r
	l.n++
	return i
}

// release frees record i, which holds no timer.
func (t *TimerService[K]) release(i uint32) {
	r := t.recs.at(i)
	*r = keyTimers[K]{gen: r.gen + 1}
	t.free = append(t.free, i)
}

// Len is the number of timers.
func (t *TimerService[K]) Len() int { return t.n }

func (t *TimerService[K]) heap(processing bool) *timerHeap {
	if processing {
		return &t.processing
	}
	return &t.event
}

// none is record's answer for a key without a record.
const none = ^uint32(0)

// record returns the number of k's record: the one in *slot (the aux word
// of k's state entry, 0 for none), else the one in loose, which moves to
// the slot; else a new one (create set, kept in the slot or else in
// loose) or none.
func (t *TimerService[K]) record(k K, slot *uint64, create bool) uint32 {
	if slot != nil && *slot != 0 {
		return uint32(*slot - 1)
	}
	if len(t.loose) > 0 {
		if i, ok := t.loose[k]; ok {
			if slot != nil {
				delete(t.loose, k)
				*slot = uint64(i) + 1
				t.recs.at(i).attached = true
			}
			return i
		}
	}
	if !create {
		return none
	}
	i := t.newRecord(k)
	if slot != nil {
		*slot = uint64(i) + 1
		t.recs.at(i).attached = true
	} else {
		t.loose[k] = i
	}
	return i
}

// lookup returns the timer of record i's key at time at in a domain, if
// it is set; i may be none.
func (t *TimerService[K]) lookup(i uint32, at int64, processing bool) (timerRec, bool) {
	if i == none {
		return timerRec{}, false
	}
	r := t.recs.at(i)
	if j := r.find(at, processing); j >= 0 {
		return r.in[j], true
	}
	switch {
	case r.more > 0:
		tm, ok := t.more[timerID[K]{r.key, at, processing}]
		return tm, ok
	}
	return timerRec{}, false
}

// set adds a timer that is not set to record i.
func (t *TimerService[K]) set(i uint32, tm timerRec) {
	r := t.recs.at(i)
	if int(r.nIn) < len(r.in) {
		r.in[r.nIn] = tm
		r.nIn++
	} else {
		if t.more == nil {
			t.more = make(map[timerID[K]]timerRec)
		}
		t.more[timerID[K]{r.key, tm.at, tm.processing}] = tm
		r.more++
	}
	t.heap(tm.processing).push(timerEntry{tm.at, tm.seq, i, r.gen})
	t.n++
}

// unset removes a timer that is set, tm, from record i; its heap entry
// becomes stale, or is gone already (popped). A loose record left empty
// goes.
func (t *TimerService[K]) unset(i uint32, tm timerRec) {
	r := t.recs.at(i)
	if j := r.find(tm.at, tm.processing); j >= 0 && r.in[j].seq == tm.seq {
		r.nIn--
		r.in[j] = r.in[r.nIn]
		r.in[r.nIn] = timerRec{}
	} else {
		delete(t.more, timerID[K]{r.key, tm.at, tm.processing})
		r.more--
	}
	t.n--
	if !r.attached && r.empty() {
		delete(t.loose, r.key)
		t.release(i)
	}
}

// Register sets a timer of k at time at, in processing time or in event
// time. It may be called from a timer's fire. A service that keeps its
// timers with the state (KeepWith) takes them through RegisterIn only.
func (t *TimerService[K]) Register(k K, at int64, processing bool) {
	t.keptPanics("Register")
	t.register(k, nil, at, processing)
}

// RegisterIn is Register for a key whose state entry has aux word *slot
// (state.Ref), or a copy of it that goes back to the entry after the
// call.
func (t *TimerService[K]) RegisterIn(k K, slot *uint64, at int64, processing bool) {
	t.register(k, slot, at, processing)
}

func (t *TimerService[K]) register(k K, slot *uint64, at int64, processing bool) {
	i := t.record(k, slot, true)
	if _, ok := t.lookup(i, at, processing); ok {
		return
	}
	tm := timerRec{at: at, seq: t.seq, born: t.log.epoch, processing: processing}
	t.seq++
	tm.listed = t.log.add(timerChange[K]{key: k, rec: i, gen: t.recs.at(i).gen, timerRec: tm})
	t.set(i, tm)
}

// gone lists timer tm of record i, key k, as deleted or run, after unset.
// A timer registered in the current epoch is taken off the epoch's list
// instead: a delta writes neither its registration nor its going, and a
// key that comes and goes within an epoch (q4's auctions, each with a
// timer at its expiry: a million a second) leaves nothing in the list,
// which otherwise grew by two changes a key and was copied over and over
// as it grew.
func (t *TimerService[K]) gone(k K, i uint32, tm timerRec) {
	if tm.listed != 0 && tm.born == t.log.epoch {
		if p := int(tm.listed - 1); p < len(t.log.cur) {
			if c := &t.log.cur[p]; !c.gone && !c.void && c.rec == i && c.seq == tm.seq {
				t.log.unlist(p, t.relist)
				return
			}
		}
	}
	t.log.add(timerChange[K]{key: k, rec: i, timerRec: tm, gone: true})
}

// relist sets the place in the list of changes of the timer whose
// registration c is, which the list's compaction moved (changeLog.unlist).
func (t *TimerService[K]) relist(c *timerChange[K], listed uint32) {
	if c.gone {
		return
	}
	r := t.recs.at(c.rec)
	if r.gen != c.gen {
		return // gone since, its record freed
	}
	if j := r.find(c.at, c.processing); j >= 0 {
		if r.in[j].seq == c.seq {
			r.in[j].listed = listed
		}
		return
	}
	if r.more > 0 {
		id := timerID[K]{r.key, c.at, c.processing}
		if tm, ok := t.more[id]; ok && tm.seq == c.seq {
			tm.listed = listed
			t.more[id] = tm
		}
	}
}

// keptPanics fails a call that would miss the timers kept with the state.
func (t *TimerService[K]) keptPanics(what string) {
	if t.kept {
		panic("eventtime.TimerService: " + what + " without the key's state entry, in a service whose timers are kept with the state (KeepWith): call " + what + "In")
	}
}

// Delete removes the timer of k at time at, if there is one. It may be
// called from a timer's fire. A service that keeps its timers with the
// state (KeepWith) takes DeleteIn only.
func (t *TimerService[K]) Delete(k K, at int64, processing bool) {
	t.keptPanics("Delete")
	t.delete(k, nil, at, processing)
}

// DeleteIn is Delete for a key whose state entry has aux word slot.
func (t *TimerService[K]) DeleteIn(k K, slot *uint64, at int64, processing bool) {
	t.delete(k, slot, at, processing)
}

func (t *TimerService[K]) delete(k K, slot *uint64, at int64, processing bool) {
	i := t.record(k, slot, false)
	tm, ok := t.lookup(i, at, processing)
	if !ok {
		return
	}
	t.unset(i, tm)
	t.stale++
	t.gone(k, i, tm)
	if t.stale > 1024 && t.stale > t.n {
		t.compact()
	}
}

// live returns the timer of heap entry e, if it is set. (A record freed
// and used again since holds timers of higher numbers.)
func (t *TimerService[K]) live(e timerEntry, processing bool) (timerRec, bool) {
	r := t.recs.at(e.rec)
	if r.gen != e.gen {
		return timerRec{}, false
	}
	for j := range r.nIn {
		if r.in[j].seq == e.seq {
			return r.in[j], true
		}
	}
	if r.more == 0 {
		return timerRec{}, false
	}
	tm, ok := t.more[timerID[K]{r.key, e.at, processing}]
	return tm, ok && tm.seq == e.seq
}

// compact drops the stale entries of the heaps.
func (t *TimerService[K]) compact() {
	for _, processing := range []bool{false, true} {
		h := t.heap(processing)
		kept := (*h)[:0]
		for _, e := range *h {
			if _, ok := t.live(e, processing); ok {
				kept = append(kept, e)
			}
		}
		clear((*h)[len(kept):])
		*h = kept
		h.init()
	}
	t.stale = 0
}

// top drops the stale entries at the top of h.
func (t *TimerService[K]) top(h *timerHeap, processing bool) {
	for len(*h) > 0 {
		if _, ok := t.live((*h)[0], processing); ok {
			return
		}
		h.pop()
		t.stale--
	}
}

// AdvanceEvent runs every event-time timer at or before wm, in time order.
// A timer that fire registers at or before wm runs in the same call. A
// timer registered earlier for a time the watermark has passed already runs
// at the next call.
func (t *TimerService[K]) AdvanceEvent(wm int64, fire func(k K, at int64)) {
	t.advance(false, wm, fire)
}

// AdvanceProcessing runs every processing-time timer at or before now,
// like AdvanceEvent.
func (t *TimerService[K]) AdvanceProcessing(now int64, fire func(k K, at int64)) {
	t.advance(true, now, fire)
}

func (t *TimerService[K]) advance(processing bool, now int64, fire func(k K, at int64)) {
	h := t.heap(processing)
	for len(*h) > 0 && (*h)[0].at <= now {
		e := h.pop()
		tm, ok := t.live(e, processing)
		if !ok {
			t.stale--
			continue
		}
		k := t.recs.at(e.rec).key
		t.unset(e.rec, tm)
		t.gone(k, e.rec, tm)
		fire(k, e.at)
	}
	if invariants.On {
		t.check()
	}
}

// NextProcessing is the time of the earliest processing-time timer: when
// the operator's clock should wake it.
func (t *TimerService[K]) NextProcessing() (int64, bool) {
	t.top(&t.processing, true)
	if len(t.processing) == 0 {
		return 0, false
	}
	return t.processing[0].at, true
}

// NextEvent is the time of the earliest event-time timer.
func (t *TimerService[K]) NextEvent() (int64, bool) {
	t.top(&t.event, false)
	if len(t.event) == 0 {
		return 0, false
	}
	return t.event[0].at, true
}

// timers calls yield for every timer set, with its key, in no particular
// order: every timer has one live heap entry.
func (t *TimerService[K]) timers(yield func(k K, tm timerRec) error) error {
	for _, processing := range []bool{false, true} {
		for _, e := range *t.heap(processing) {
			if tm, ok := t.live(e, processing); ok {
				if err := yield(t.recs.at(e.rec).key, tm); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Snapshot writes every timer into the section of its key's group: the key
// (encK), its time, its domain and its registration number.
func (t *TimerService[K]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K)) error {
	if invariants.On {
		t.check()
	}
	writeSectionHeaders(sec, sectionHeader{wm: MinTime, seq: t.seq})
	return t.timers(func(k K, r timerRec) error {
		w, err := keySection(sec, keyGroup, k)
		if err != nil {
			return err
		}
		m := w.Begin()
		encK(w, k)
		w.Varint(r.at)
		w.Bool(r.processing)
		w.Uvarint(r.seq)
		w.End(m)
		return nil
	})
}

// SnapshotDelta writes the timers as d says: every one (as Snapshot
// does), or those registered and those gone (deleted or run) after epoch
// d.Since, each into the section of its key's group. It ends the epoch
// and returns it: a delta on top of this snapshot passes it as Since.
func (t *TimerService[K]) SnapshotDelta(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), d Delta) (uint64, error) {
	if invariants.On && !d.Full {
		t.check() // Snapshot checks a full one
	}
	if d.Full {
		if err := t.Snapshot(sec, keyGroup, encK); err != nil {
			return 0, err
		}
		return t.log.close(d, nil)
	}
	writeSectionHeaders(sec, sectionHeader{wm: MinTime, seq: t.seq})
	return t.log.close(d, func(epoch uint64, c *timerChange[K]) error {
		op := uint64(deltaPut)
		switch {
		case c.void:
			return nil
		case !c.gone:
			if r := t.recs.at(c.rec); r.gen != c.gen {
				return nil // gone since, its record freed: its delete is listed too
			}
			if r, ok := t.lookup(c.rec, c.at, c.processing); !ok || r.seq != c.seq {
				return nil // gone since: its delete is listed too, or it never was in a checkpoint
			}
		case c.born <= d.Since:
			// It was in the base: a timer registered and gone since
			// never was, and is left out.
			op = deltaDelete
		default:
			return nil
		}
		tm, k := c.timerRec, c.key
		w, err := keySection(sec, keyGroup, k)
		if err != nil {
			return err
		}
		m := w.Begin()
		w.Uvarint(op)
		encK(w, k)
		w.Varint(tm.at)
		w.Bool(tm.processing)
		w.Uvarint(tm.seq)
		w.End(m)
		return nil
	})
}

// Epoch is the epoch the next SnapshotDelta ends.
func (t *TimerService[K]) Epoch() uint64 { return t.log.current() }

// Track makes the service list its changes from now on: a delta may be
// taken on top of the files it was restored from.
func (t *TimerService[K]) Track() { t.log.tracking = true }

// EndChain is called after the files of each subtask of the checkpoint
// the service is restored from: timers need nothing done then.
func (t *TimerService[K]) EndChain() error { return nil }

// Restore adds the timers of one key group's section.
func (t *TimerService[K]) Restore(section []byte, decK func(*codec.Reader) K) error {
	return t.RestoreSection(section, false, decK)
}

// RestoreSection adds the timers of one key group's section of a full
// file, or applies a delta's (delta set) on top of what was restored
// before it. The restored timers are loose: records move to their keys'
// state entries as the keys come up (record).
func (t *TimerService[K]) RestoreSection(section []byte, delta bool, decK func(*codec.Reader) K) error {
	seq, err := ReadTimerChanges(section, delta, decK, func(del bool, k K, at int64, processing bool, seq uint64) error {
		i := t.record(k, nil, false)
		if old, ok := t.lookup(i, at, processing); ok {
			if !delta {
				return fmt.Errorf("%w: timer of key %v at %d restored twice", codec.ErrCorrupt, k, at)
			}
			t.unset(i, old)
			t.stale++
		}
		if del {
			return nil
		}
		i = t.record(k, nil, true) // unset may have freed it
		t.seq = max(t.seq, seq+1)
		t.set(i, timerRec{at: at, seq: seq, processing: processing})
		return nil
	})
	t.seq = max(t.seq, seq)
	return err
}

// timerEntry is a timer in a heap: its time, registration number and
// the number of its key's record, and the record's gen then.
type timerEntry struct {
	at       int64
	seq      uint64
	rec, gen uint32
}

// timerHeap is a min-heap of timer entries by (at, seq). It is
// timeHeap's sift up and down (eventtime.go) written again, on purpose:
// timeHeap's elements are pointers that keep their index, and one generic
// sift for both calls its comparison and its move through the generic
// dictionary, not inlined (an indirect call per comparison; 1.5 times
// the time of a pop and a push in a microbenchmark of 50K timers), on a
// path that is as much of q4's CPU as the hand-written program's heap.
type timerHeap []timerEntry

func (h timerHeap) less(i, j int) bool { return before(&h[i], &h[j]) == 1 }

// before is 1 when a comes before b by (at, seq), else 0: the borrow of
// the 128-bit subtraction (at with its sign bit flipped, so that signed
// order is unsigned order; then seq), without a branch. Which child of a
// node is smaller is a coin toss that a branch mispredicts half the
// time; picked by arithmetic (down), a push and the pops it makes due
// took 72-86 ns instead of 100-122 in BenchmarkTimerHeap (about 2,000
// timers pending, as q4's; pairs on a noisy host), 59 instead of 73 with
// about 200.
func before(a, b *timerEntry) uint64 {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.at)^1<<63, uint64(b.at)^1<<63, borrow)
	return borrow
}

func (h *timerHeap) push(e timerEntry) {
	if len(*h) == cap(*h) && cap(*h) >= doubleFrom {
		// Doubled in pieces, its room untouched: append grows a large
		// slice by a quarter, copying it whole in one call that the
		// collector cannot stop the goroutine in, and clears the room
		// it adds (BenchmarkTimersManyKeys).
		*h = doubled(*h)
	}
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *timerHeap) pop() timerEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	var zero timerEntry
	s[last] = zero
	s = s[:last]
	s.down(0)
	*h = s
	return top
}

func (h timerHeap) down(i int) {
	if len(h) > cachedHeap {
		h.downFar(i)
		return
	}
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if l+1 < len(h) {
			c += int(before(&h[l+1], &h[l]))
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// cachedHeap is the most entries (384 KiB) for which down picks the
// smaller child by arithmetic. In a larger heap the next level's loads
// miss the cache, and a branch lets the processor start them before the
// comparison is done, where arithmetic makes them wait for it: a million
// timers set at once and run (BenchmarkTimersManyKeys) took 1.06-1.39
// times as long without the branch (6 pairs).
const cachedHeap = 1 << 14

// downFar is down with a branch per level.
func (h timerHeap) downFar(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// init orders h.
func (h timerHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
