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
