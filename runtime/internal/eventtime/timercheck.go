package eventtime

import "github.com/pipegen/pipegen/runtime/internal/invariants"

// check verifies that the service's bookkeeping agrees with itself
// (invariants.On builds only; O(records + heap entries)):
//
//   - each heap is ordered by (time, registration number);
//   - the heap entries whose timer is set (live) number t.n, one per
//     timer, and the others t.stale;
//   - a record not on the free list is kept with its key's state entry
//     (attached) or in loose under its key, not both, and a loose one
//     holds a timer (unset frees it when it holds none); a free one is
//     empty and attached nowhere;
//   - the timers in records and in more number t.n, and the records
//     count those of theirs in more;
//   - the list of the current epoch's changes (checkLog).
//
// A count that drifted would make compaction run too late or too often
// and Len lie; a record on the free list that still held a timer would
// give it to another key.
func (t *TimerService[K]) check() {
	live := 0
	seen := make(map[[2]uint64]bool)
	for _, processing := range []bool{false, true} {
		h := *t.heap(processing)
		for i := 1; i < len(h); i++ {
			if h.less(i, (i-1)/2) {
				invariants.Failf("timer heap (processing %v): entry %d (at %d, seq %d) comes before its parent %d (at %d, seq %d)", processing, i, h[i].at, h[i].seq, (i-1)/2, h[(i-1)/2].at, h[(i-1)/2].seq)
			}
		}
		for _, e := range h {
			if int(e.rec) >= t.recs.n {
				invariants.Failf("timer heap entry (at %d, seq %d) names record %d of %d", e.at, e.seq, e.rec, t.recs.n)
			}
			tm, ok := t.live(e, processing)
			if !ok {
				continue
			}
			if tm.at != e.at || tm.processing != processing {
				invariants.Failf("timer heap entry (at %d, seq %d, processing %v) is live for a timer at %d, processing %v", e.at, e.seq, processing, tm.at, tm.processing)
			}
			id := [2]uint64{uint64(e.rec), e.seq}
			if seen[id] {
				invariants.Failf("timer of record %d, seq %d, has two live heap entries", e.rec, e.seq)
			}
			seen[id] = true
			live++
		}
	}
	if entries := len(t.event) + len(t.processing); live != t.n || entries-live != t.stale {
		invariants.Failf("timer service: %d live heap entries and %d stale, counted %d timers and %d stale", live, entries-live, t.n, t.stale)
	}

	free := make(map[uint32]bool, len(t.free))
	for _, i := range t.free {
		if free[i] {
			invariants.Failf("timer record %d is on the free list twice", i)
		}
		free[i] = true
	}
	inRecs, inMore := 0, 0
	for i := range uint32(t.recs.n) {
		r := t.recs.at(i)
		j, loose := t.loose[r.key]
		loose = loose && j == i
		switch {
		case free[i]:
			if !r.empty() || r.attached || loose {
				invariants.Failf("free timer record %d holds %d timers (%d more), attached %v, loose %v", i, r.nIn, r.more, r.attached, loose)
			}
			continue
		case r.attached && loose:
			invariants.Failf("timer record %d of key %v is both kept with its state entry and loose", i, r.key)
		case !r.attached && !loose:
			invariants.Failf("timer record %d of key %v is in use but neither kept with its state entry nor loose", i, r.key)
		case loose && r.empty():
			invariants.Failf("loose timer record %d of key %v holds no timer", i, r.key)
		case r.nIn > uint8(len(r.in)) || r.more < 0:
			invariants.Failf("timer record %d of key %v counts %d timers in place and %d more", i, r.key, r.nIn, r.more)
		}
		inRecs += int(r.nIn)
		inMore += int(r.more)
	}
	for k, i := range t.loose {
		if int(i) >= t.recs.n || t.recs.at(i).key != k {
			invariants.Failf("loose timers of key %v name record %d, not its", k, i)
		}
	}
	if inMore != len(t.more) || inRecs+inMore != t.n {
		invariants.Failf("timer records hold %d timers in place and count %d more, the service %d more and %d timers in all", inRecs, inMore, len(t.more), t.n)
	}
	t.checkLog()
}

// checkLog verifies the list of changes that the next delta writes
// (changes.go), part of check:
//
//   - nothing is listed before changes are tracked, and the lists kept
//     for deltas are of earlier epochs, oldest first;
//   - the changes taken off the current epoch's list (void) number
//     voids, which says when to compact it;
//   - each timer set in the current epoch and listed is at its place in
//     the list (listed), as its registration, and every registration on
//     the list is of a timer still set: one deleted or run in the epoch
//     it was registered in is taken off (gone).
//
// A timer whose place is wrong would be written by a delta as registered
// although it went, or its going be listed besides its registration: a
// restore from the delta would then hold a timer that was deleted, or
// lose one that is set.
func (t *TimerService[K]) checkLog() {
	l := &t.log
	if !l.tracking && (len(l.cur) > 0 || len(l.pending) > 0) {
		invariants.Failf("timer changes: %d listed in the current epoch and %d epochs kept before changes are tracked", len(l.cur), len(l.pending))
	}
	for i, c := range l.pending {
		if c.epoch >= l.current() || i > 0 && c.epoch <= l.pending[i-1].epoch {
			invariants.Failf("timer changes: the lists kept are of epochs %v..., the current one %d", c.epoch, l.current())
		}
	}
	voids, registered := 0, 0
	for _, c := range l.cur {
		switch {
		case c.void:
			voids++
		case !c.gone:
			registered++
		}
	}
	if voids != l.voids {
		invariants.Failf("timer changes: %d of the current epoch's list are void, voids counts %d", voids, l.voids)
	}
	matched := 0
	_ = t.timers(func(k K, tm timerRec) error {
		if tm.listed == 0 || tm.born != l.current() {
			return nil
		}
		p := int(tm.listed) - 1
		if p >= len(l.cur) {
			invariants.Failf("timer of key %v at %d (seq %d) is listed at %d of %d changes", k, tm.at, tm.seq, p, len(l.cur))
		}
		c := &l.cur[p]
		if c.void || c.gone || c.key != k || c.seq != tm.seq || c.at != tm.at || c.processing != tm.processing {
			invariants.Failf("timer of key %v at %d (seq %d) is listed at %d, which holds the change of key %v at %d (seq %d, gone %v, void %v)", k, tm.at, tm.seq, p, c.key, c.at, c.seq, c.gone, c.void)
		}
		matched++
		return nil
	})
	if matched != registered {
		invariants.Failf("timer changes: %d registrations listed in the current epoch, %d of them of timers still set", registered, matched)
	}
}
