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
//     count those of theirs in more.
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
}
