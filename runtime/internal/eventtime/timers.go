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
}

// NewTimerService returns a service without timers.
func NewTimerService[K comparable]() *TimerService[K] {
	return &TimerService[K]{timers: make(map[timerID[K]]*timer[K])}
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
	tm := &timer[K]{key: k, processing: processing}
	tm.at, tm.seq = at, t.seq
	t.seq++
	t.timers[id] = tm
	t.heap(processing).push(tm)
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

// Restore adds the timers of one key group's section.
func (t *TimerService[K]) Restore(section []byte, decK func(*codec.Reader) K) error {
	seq, err := ReadTimers(section, decK, func(k K, at int64, processing bool, seq uint64) error {
		id := timerID[K]{k, at, processing}
		if _, dup := t.timers[id]; dup {
			return fmt.Errorf("%w: timer of key %v at %d restored twice", codec.ErrCorrupt, k, at)
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
