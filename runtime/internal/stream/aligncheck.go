package stream

import "github.com/pipegen/pipegen/runtime/internal/invariants"

// check verifies the inbox's bookkeeping of barriers and ends
// (invariants.On builds only, at each control event; O(senders)):
//
//   - the senders marked as having sent the barrier being aligned number
//     nArrived, and there are none while no barrier is (barrier 0);
//   - the senders marked as ended number nEnded.
//
// A count out of step with its marks would hand out a barrier before
// every sender had sent it (a snapshot missing records before it), or
// never.
func (in *inboxControl) check() {
	arrived, ended := 0, 0
	for s := range in.senders {
		if in.arrived[s] {
			arrived++
		}
		if in.ended[s] {
			ended++
		}
	}
	if arrived != in.nArrived || in.barrier == 0 && arrived > 0 {
		invariants.Failf("inbox aligning barrier %d: %d senders marked as arrived, nArrived %d", in.barrier, arrived, in.nArrived)
	}
	if ended != in.nEnded {
		invariants.Failf("inbox: %d of %d senders marked as ended, nEnded %d", ended, in.senders, in.nEnded)
	}
}

// checkRecords verifies that records come from a sender that is not
// waiting for the barrier it sent to be aligned (invariants.On builds
// only, exactly-once mode): such a sender is held back (Out.send, gated)
// until Release, and records after its barrier that reached the receiver
// before the snapshot would be in the state of a checkpoint they follow,
// then counted again after a restore from it.
func (in *inboxControl) checkRecords(from int32) {
	if in.aligned && in.arrived[from] {
		invariants.Failf("inbox aligning barrier %d: records from sender %d, which sent the barrier and is not released", in.barrier, from)
	}
}
