package eventtime

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
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
type TimerService[K comparable] struct {
	// first holds, per key that has timers, one of them (has set) and
	// how many others the key has in more, by (key, time, domain): most
	// keys have one timer at a time, so a timer is found, set and run
	// with one lookup by key, and more is looked in only for a key that
	// has timers there. A timer is in one of them, never both.
	first map[K]keyTimers
	more  map[timerID[K]]timerRec
	// The heaps of each domain hold an entry per timer set, by time and
	// registration number, and entries of timers deleted since (stale:
	// their timer is not in first or more any more), which are skipped
	// when they come up and compacted away when they outnumber the rest.
	// Values, not pointers: a timer costs no allocation, and the heap's
	// comparisons read no other memory.
	event      timerHeap[K]
	processing timerHeap[K]
	n          int    // timers set
	stale      int    // stale heap entries
	seq        uint64 // the registration number of the next timer
	// log lists the timers registered and the timers gone (deleted or
	// run) in each epoch, for deltas (changes.go).
	log changeLog[timerChange[K]]
}

type timerID[K comparable] struct {
	key        K
	at         int64
	processing bool
}

// timerRec is a timer that is set.
type timerRec struct {
	at  int64
	seq uint64 // the registration number
	// born is the epoch the timer was registered in.
	born uint64
	// processing is the domain: processing time, or event time.
	processing bool
}

// keyTimers is first's entry of a key: one of its timers, if has is set,
// and the number of its timers in more. (It fits in timerRec's padding:
// the same 32 bytes.)
type keyTimers struct {
	timerRec
	has  bool
	more int32
}

// is reports whether f holds the timer at time at in a domain.
func (f *keyTimers) is(at int64, processing bool) bool {
	return f.has && f.at == at && f.processing == processing
}

// timerChange is a timer registered (gone unset) or deleted or run, in
// the epoch it is listed in.
type timerChange[K comparable] struct {
	key K
	timerRec
	gone bool
}

// NewTimerService returns a service without timers.
func NewTimerService[K comparable]() *TimerService[K] {
	return &TimerService[K]{first: make(map[K]keyTimers), log: changeLog[timerChange[K]]{epoch: 1}}
}

// Len is the number of timers.
func (t *TimerService[K]) Len() int { return t.n }

func (t *TimerService[K]) heap(processing bool) *timerHeap[K] {
	if processing {
		return &t.processing
	}
	return &t.event
}

// lookup returns the timer of k at time at in a domain, if it is set, and
// k's entry in first (f, and found whether it has one) for set and unset.
func (t *TimerService[K]) lookup(k K, at int64, processing bool) (r timerRec, ok bool, f keyTimers, found bool) {
	f, found = t.first[k]
	switch {
	case !found:
	case f.is(at, processing):
		r, ok = f.timerRec, true
	case f.more > 0:
		r, ok = t.more[timerID[K]{k, at, processing}]
	}
	return r, ok, f, found
}

// set adds a timer that is not set; f and found are lookup's.
func (t *TimerService[K]) set(k K, r timerRec, f keyTimers, found bool) {
	switch {
	case !found:
		t.first[k] = keyTimers{timerRec: r, has: true}
	case !f.has:
		f.timerRec, f.has = r, true
		t.first[k] = f
	default:
		if t.more == nil {
			t.more = make(map[timerID[K]]timerRec)
		}
		t.more[timerID[K]{k, r.at, r.processing}] = r
		f.more++
		t.first[k] = f
	}
	t.heap(r.processing).push(timerEntry[K]{r.at, r.seq, k})
	t.n++
}

// unset removes a timer that is set, r, whose key's entry in first is f;
// its heap entry becomes stale, or is gone already (popped).
func (t *TimerService[K]) unset(k K, r timerRec, f keyTimers) {
	if f.has && f.seq == r.seq && f.at == r.at && f.processing == r.processing {
		f.has = false
	} else {
		delete(t.more, timerID[K]{k, r.at, r.processing})
		f.more--
	}
	if !f.has && f.more == 0 {
		delete(t.first, k)
	} else {
		t.first[k] = f
	}
	t.n--
}

// Register sets a timer of k at time at, in processing time or in event
// time. It may be called from a timer's fire.
func (t *TimerService[K]) Register(k K, at int64, processing bool) {
	_, ok, f, found := t.lookup(k, at, processing)
	if ok {
		return
	}
	r := timerRec{at: at, seq: t.seq, born: t.log.epoch, processing: processing}
	t.seq++
	t.set(k, r, f, found)
	t.log.add(timerChange[K]{key: k, timerRec: r})
}

// Delete removes the timer of k at time at, if there is one. It may be
// called from a timer's fire.
func (t *TimerService[K]) Delete(k K, at int64, processing bool) {
	r, ok, f, _ := t.lookup(k, at, processing)
	if !ok {
		return
	}
	t.unset(k, r, f)
	t.stale++
	t.log.add(timerChange[K]{key: k, timerRec: r, gone: true})
	if t.stale > 1024 && t.stale > t.n {
		t.compact()
	}
}

// live reports whether e is the entry of a timer that is set, and
// returns it with its key's entry in first (for unset).
func (t *TimerService[K]) live(e timerEntry[K], processing bool) (timerRec, keyTimers, bool) {
	r, ok, f, _ := t.lookup(e.key, e.at, processing)
	return r, f, ok && r.seq == e.seq
}

// compact drops the stale entries of the heaps.
func (t *TimerService[K]) compact() {
	for _, processing := range []bool{false, true} {
		h := t.heap(processing)
		kept := (*h)[:0]
		for _, e := range *h {
			if _, _, ok := t.live(e, processing); ok {
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
func (t *TimerService[K]) top(h *timerHeap[K], processing bool) {
	for len(*h) > 0 {
		if _, _, ok := t.live((*h)[0], processing); ok {
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
		r, f, ok := t.live(e, processing)
		if !ok {
			t.stale--
			continue
		}
		t.unset(e.key, r, f)
		t.log.add(timerChange[K]{key: e.key, timerRec: r, gone: true})
		fire(e.key, e.at)
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

// Snapshot writes every timer into the section of its key's group: the key
// (encK), its time, its domain and its registration number.
func (t *TimerService[K]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K)) error {
	writeSectionHeaders(sec, sectionHeader{wm: MinTime, seq: t.seq})
	write := func(k K, r timerRec) error {
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
	}
	for k, f := range t.first {
		if !f.has {
			continue
		}
		if err := write(k, f.timerRec); err != nil {
			return err
		}
	}
	for id, r := range t.more {
		if err := write(id.key, r); err != nil {
			return err
		}
	}
	return nil
}

// SnapshotDelta writes the timers as d says: every one (as Snapshot
// does), or those registered and those gone (deleted or run) after epoch
// d.Since, each into the section of its key's group. It ends the epoch
// and returns it: a delta on top of this snapshot passes it as Since.
func (t *TimerService[K]) SnapshotDelta(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), d Delta) (uint64, error) {
	if d.Full {
		if err := t.Snapshot(sec, keyGroup, encK); err != nil {
			return 0, err
		}
		return t.log.close(d, nil)
	}
	writeSectionHeaders(sec, sectionHeader{wm: MinTime, seq: t.seq})
	return t.log.close(d, func(epoch uint64, c timerChange[K]) error {
		op := uint64(deltaPut)
		switch {
		case !c.gone:
			if r, ok, _, _ := t.lookup(c.key, c.at, c.processing); !ok || r.seq != c.seq {
				return nil // gone since: its delete is listed too, or it never was in a checkpoint
			}
		case c.born <= d.Since:
			// It was in the base: a timer registered and gone since
			// never was, and is left out.
			op = deltaDelete
		default:
			return nil
		}
		tm := c.timerRec
		w, err := keySection(sec, keyGroup, c.key)
		if err != nil {
			return err
		}
		m := w.Begin()
		w.Uvarint(op)
		encK(w, c.key)
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
// before it.
func (t *TimerService[K]) RestoreSection(section []byte, delta bool, decK func(*codec.Reader) K) error {
	seq, err := ReadTimerChanges(section, delta, decK, func(del bool, k K, at int64, processing bool, seq uint64) error {
		old, ok, f, found := t.lookup(k, at, processing)
		if ok {
			if !delta {
				return fmt.Errorf("%w: timer of key %v at %d restored twice", codec.ErrCorrupt, k, at)
			}
			t.unset(k, old, f)
			t.stale++
			f, found = t.first[k]
		}
		if del {
			return nil
		}
		t.seq = max(t.seq, seq+1)
		t.set(k, timerRec{at: at, seq: seq, processing: processing}, f, found)
		return nil
	})
	t.seq = max(t.seq, seq)
	return err
}

// timerEntry is a timer in a heap: its time, registration number and key.
type timerEntry[K comparable] struct {
	at  int64
	seq uint64
	key K
}

// timerHeap is a min-heap of timer entries by (at, seq).
type timerHeap[K comparable] []timerEntry[K]

func (h timerHeap[K]) less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}

func (h *timerHeap[K]) push(e timerEntry[K]) {
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

func (h *timerHeap[K]) pop() timerEntry[K] {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	var zero timerEntry[K]
	s[last] = zero
	s = s[:last]
	s.down(0)
	*h = s
	return top
}

func (h timerHeap[K]) down(i int) {
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
func (h timerHeap[K]) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
