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
	timers     map[timerID[K]]*timer[K]
	event      timeHeap[*timer[K]]
	processing timeHeap[*timer[K]]
	seq        uint64 // the registration number of the next timer
	// log lists the timers registered and the timers gone (deleted or
	// run) in each epoch, for deltas (changes.go).
	log changeLog[*timer[K]]
}

type timerID[K comparable] struct {
	key        K
	at         int64
	processing bool
}

type timer[K comparable] struct {
	heapSlot // at is the timer's time, seq its registration number
	key      K
	// processing is the domain: processing time, or event time.
	processing bool
	// born is the epoch the timer was registered in, died the one it
	// was deleted or run in (0 while it is set). A timer registered again
	// is a new timer.
	born, died uint64
}

// NewTimerService returns a service without timers.
func NewTimerService[K comparable]() *TimerService[K] {
	return &TimerService[K]{timers: make(map[timerID[K]]*timer[K]), log: changeLog[*timer[K]]{epoch: 1}}
}

// Len is the number of timers.
func (t *TimerService[K]) Len() int { return len(t.timers) }

func (t *TimerService[K]) heap(processing bool) *timeHeap[*timer[K]] {
	if processing {
		return &t.processing
	}
	return &t.event
}

// Register sets a timer of k at time at, in processing time or in event
// time. It may be called from a timer's fire.
func (t *TimerService[K]) Register(k K, at int64, processing bool) {
	id := timerID[K]{k, at, processing}
	if _, ok := t.timers[id]; ok {
		return
	}
	tm := &timer[K]{key: k, processing: processing, born: t.log.epoch}
	tm.at, tm.seq = at, t.seq
	t.seq++
	t.timers[id] = tm
	t.heap(processing).push(tm)
	t.log.add(tm)
}

// Delete removes the timer of k at time at, if there is one. It may be
// called from a timer's fire.
func (t *TimerService[K]) Delete(k K, at int64, processing bool) {
	id := timerID[K]{k, at, processing}
	tm, ok := t.timers[id]
	if !ok {
		return
	}
	delete(t.timers, id)
	t.heap(processing).remove(tm.hi)
	t.gone(tm)
}

// gone records that tm was deleted or ran.
func (t *TimerService[K]) gone(tm *timer[K]) {
	tm.died = t.log.epoch
	t.log.add(tm)
}

// AdvanceEvent runs every event-time timer at or before wm, in time order.
// A timer that fire registers at or before wm runs in the same call. A
// timer registered earlier for a time the watermark has passed already runs
// at the next call.
func (t *TimerService[K]) AdvanceEvent(wm int64, fire func(k K, at int64)) {
	t.advance(&t.event, wm, fire)
}

// AdvanceProcessing runs every processing-time timer at or before now,
// like AdvanceEvent.
func (t *TimerService[K]) AdvanceProcessing(now int64, fire func(k K, at int64)) {
	t.advance(&t.processing, now, fire)
}

func (t *TimerService[K]) advance(h *timeHeap[*timer[K]], now int64, fire func(k K, at int64)) {
	for len(*h) > 0 && (*h)[0].at <= now {
		tm := h.remove(0)
		delete(t.timers, timerID[K]{tm.key, tm.at, tm.processing})
		t.gone(tm)
		fire(tm.key, tm.at)
	}
}

// NextProcessing is the time of the earliest processing-time timer: when
// the operator's clock should wake it.
func (t *TimerService[K]) NextProcessing() (int64, bool) {
	if len(t.processing) == 0 {
		return 0, false
	}
	return t.processing[0].at, true
}

// NextEvent is the time of the earliest event-time timer.
func (t *TimerService[K]) NextEvent() (int64, bool) {
	if len(t.event) == 0 {
		return 0, false
	}
	return t.event[0].at, true
}

// Snapshot writes every timer into the section of its key's group: the key
// (encK), its time, its domain and its registration number.
func (t *TimerService[K]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K)) error {
	writeSectionHeaders(sec, sectionHeader{wm: MinTime, seq: t.seq})
	for id, tm := range t.timers {
		w, err := keySection(sec, keyGroup, id.key)
		if err != nil {
			return err
		}
		m := w.Begin()
		encK(w, id.key)
		w.Varint(tm.at)
		w.Bool(tm.processing)
		w.Uvarint(tm.seq)
		w.End(m)
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
	return t.log.close(d, func(epoch uint64, tm *timer[K]) error {
		op := uint64(deltaPut)
		switch {
		case tm.died == 0 && epoch == tm.born:
		case tm.died == epoch && tm.born <= d.Since:
			// It was in the base: a timer registered and gone since
			// never was, and is left out.
			op = deltaDelete
		default:
			return nil // listed in another epoch too, or never in a checkpoint
		}
		w, err := keySection(sec, keyGroup, tm.key)
		if err != nil {
			return err
		}
		m := w.Begin()
		w.Uvarint(op)
		encK(w, tm.key)
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
		id := timerID[K]{k, at, processing}
		if old, ok := t.timers[id]; ok {
			if !delta {
				return fmt.Errorf("%w: timer of key %v at %d restored twice", codec.ErrCorrupt, k, at)
			}
			delete(t.timers, id)
			t.heap(processing).remove(old.hi)
		}
		if del {
			return nil
		}
		tm := &timer[K]{key: k, processing: processing}
		tm.at, tm.seq = at, seq
		t.seq = max(t.seq, seq+1)
		t.timers[id] = tm
		t.heap(processing).push(tm)
		return nil
	})
	t.seq = max(t.seq, seq)
	return err
}
