package stream

import (
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/invariants"
)

// TestAlignCheck: the self-check of make invariants passes on an inbox
// that aligns a barrier of two senders and sees one end, and catches
// records from a sender held at its barrier and counts out of step with
// the marks.
func TestAlignCheck(t *testing.T) {
	build := func() *Inbox[int] {
		_, ins, _ := newRig[int](ExactlyOnce, 2, 1)
		in := ins[0]
		in.handle(Msg[int]{Kind: Records, Recs: []int{1}, From: 0})
		in.handle(Msg[int]{Kind: Barrier, Checkpoint: 1, From: 0})
		in.handle(Msg[int]{Kind: Records, Recs: []int{2}, From: 1})
		return in
	}
	in := build()
	if got := invariants.Violation(in.check); got != "" {
		t.Fatalf("the check found %q while sender 0's barrier waits for sender 1's", got)
	}
	if got := invariants.Violation(func() { in.checkRecords(1) }); got != "" {
		t.Fatalf("records from sender 1, which has not sent the barrier: the check found %q", got)
	}
	if got := invariants.Violation(func() { in.checkRecords(0) }); !strings.Contains(got, "not released") {
		t.Errorf("records from sender 0, held at its barrier: the check found %q", got)
	}
	in.handle(Msg[int]{Kind: Barrier, Checkpoint: 1, From: 1})
	in.Release(1)
	in.handle(Msg[int]{Kind: End, From: 1})
	if got := invariants.Violation(func() { in.check(); in.checkRecords(0) }); got != "" {
		t.Fatalf("after the release and an end: the check found %q", got)
	}

	for _, tc := range []struct {
		name    string
		corrupt func(*Inbox[int])
		want    string
	}{
		{"an arrival not counted", func(in *Inbox[int]) { in.nArrived-- }, "nArrived"},
		{"an arrival marked with no barrier", func(in *Inbox[int]) { in.barrier = 0 }, "nArrived"},
		{"an end counted twice", func(in *Inbox[int]) { in.nEnded = 2 }, "nEnded"},
	} {
		in := build()
		in.handle(Msg[int]{Kind: End, From: 1})
		tc.corrupt(in)
		if got := invariants.Violation(in.check); !strings.Contains(got, tc.want) {
			t.Errorf("%s: the check found %q, want a violated invariant that says %q", tc.name, got, tc.want)
		}
	}
}
