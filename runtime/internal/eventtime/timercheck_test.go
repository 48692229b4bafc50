package eventtime

import (
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/invariants"
)

// TestTimerCheck: the self-check of make invariants passes on a service
// that set, deleted, ran and moved timers (kept with state entries and
// loose, two and more a key), and catches each kind of drift in its
// bookkeeping.
func TestTimerCheck(t *testing.T) {
	build := func() *TimerService[int64] {
		ts := NewTimerService[int64]()
		slots := make([]uint64, 8)
		for k := range int64(8) {
			for at := range int64(4) { // two in the record, two in more
				ts.RegisterIn(k, &slots[k], 100+10*at+k, false)
			}
		}
		ts.RegisterIn(3, &slots[3], 500, true)
		ts.Register(20, 120, false) // loose
		ts.Register(21, 130, false)
		ts.DeleteIn(2, &slots[2], 102, false)
		ts.DeleteIn(2, &slots[2], 122, false)
		ts.Delete(21, 130, false) // its loose record goes
		ts.AdvanceEvent(111, func(int64, int64) {})
		ts.detach(5, slots[5]) // the state dropped key 5: its timers go loose
		return ts
	}
	if got := invariants.Violation(build().check); got != "" {
		t.Fatalf("the check found %q in a sound service", got)
	}

	for _, tc := range []struct {
		name    string
		corrupt func(*TimerService[int64])
		want    string
	}{
		{"a timer too many", func(ts *TimerService[int64]) { ts.n++ }, "live heap entries"},
		{"a stale entry missed", func(ts *TimerService[int64]) { ts.stale-- }, "live heap entries"},
		{"heap out of order", func(ts *TimerService[int64]) {
			h := ts.event
			h[0], h[len(h)-1] = h[len(h)-1], h[0]
		}, "comes before its parent"},
		{"a record in use freed", func(ts *TimerService[int64]) {
			ts.free = append(ts.free, ts.loose[20])
		}, "free timer record"},
		{"a loose record lost", func(ts *TimerService[int64]) { delete(ts.loose, 20) }, "neither kept"},
		{"a kept record also loose", func(ts *TimerService[int64]) {
			ts.loose[0] = 0
		}, "both kept"},
		{"more miscounted", func(ts *TimerService[int64]) { ts.recs.at(0).more++ }, "count"},
	} {
		ts := build()
		tc.corrupt(ts)
		if got := invariants.Violation(ts.check); got == "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: the check found %q, want a violated invariant that says %q", tc.name, got, tc.want)
		}
	}
}

// TestTimerLogCheck: the self-check passes on the list of a tracked
// service's changes across epochs, after deletes took registrations off
// it and compacted it, and catches a list out of step with the timers.
func TestTimerLogCheck(t *testing.T) {
	build := func() *TimerService[int64] {
		ts := NewTimerService[int64]()
		ts.Track()
		slots := make([]uint64, 3000)
		for k := range int64(3000) {
			ts.RegisterIn(k, &slots[k], 1000+k, false)
		}
		ts.log.close(Delta{Full: true}, nil)
		// In the next epoch: 3000 timers more, two thirds of them deleted
		// again (taken off the list, which is compacted), and a timer of
		// the last epoch deleted (listed as gone).
		for k := range int64(3000) {
			ts.RegisterIn(k, &slots[k], 5000+k, false)
		}
		for k := range int64(2000) {
			ts.DeleteIn(k, &slots[k], 5000+k, false)
		}
		ts.DeleteIn(7, &slots[7], 1007, false)
		ts.AdvanceEvent(1010, func(int64, int64) {})
		return ts
	}
	ts := build()
	if got := invariants.Violation(ts.check); got != "" {
		t.Fatalf("the check found %q in a sound service", got)
	}
	if ts.log.voids >= 1024 {
		t.Fatalf("%d void changes left: the list was never compacted, which the test means to cover", ts.log.voids)
	}

	for _, tc := range []struct {
		name    string
		corrupt func(*TimerService[int64])
		want    string
	}{
		{"a void change not counted", func(ts *TimerService[int64]) { ts.log.voids++ }, "voids counts"},
		{"two listed changes swapped", func(ts *TimerService[int64]) {
			var regs []int
			for i, c := range ts.log.cur {
				if !c.void && !c.gone {
					regs = append(regs, i)
				}
			}
			a, b := regs[0], regs[len(regs)-1]
			ts.log.cur[a], ts.log.cur[b] = ts.log.cur[b], ts.log.cur[a]
		}, "which holds the change"},
		{"a registration left listed", func(ts *TimerService[int64]) {
			ts.log.cur = append(ts.log.cur, timerChange[int64]{key: 99_999, timerRec: timerRec{at: 1, seq: 1 << 40}})
		}, "still set"},
		{"changes listed untracked", func(ts *TimerService[int64]) { ts.log.tracking = false }, "before changes are tracked"},
	} {
		ts := build()
		tc.corrupt(ts)
		if got := invariants.Violation(ts.check); got == "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: the check found %q, want a violated invariant that says %q", tc.name, got, tc.want)
		}
	}
}
