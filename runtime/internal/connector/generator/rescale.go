package generator

import "slices"

// rescale gives subtask sub of p the share of the sequence numbers that
// the old subtasks, at their positions old, had not called the function
// for yet: nothing twice, nothing skipped.
//
// The old subtasks' progressions seq_i, seq_i+step, ... (one step for
// all, their residues covering every one) together hold every number from
// H, the highest seq_i (of ended subtasks too), on: from H the new subtasks take H+sub, H+sub+p,
// .... What lies below H and was not called yet (each subtask's pending
// numbers, and its progression from seq_i up to H) is shared out in
// order, every p-th to each new subtask. A subtask whose function had
// returned false (at its end) contributes nothing: a generator's function
// is taken to end for good (false from some sequence number on).
func rescale(old []position, p, sub int) position {
	var h uint64
	allEnded := true
	for _, o := range old {
		// An ended subtask's seq counts too: below it, it called the
		// function for every number of its progression.
		h = max(h, o.seq)
		allEnded = allEnded && o.atEnd
	}
	if allEnded {
		return position{seq: uint64(sub), step: uint64(p), atEnd: true}
	}
	var left []uint64
	for _, o := range old {
		if o.atEnd {
			continue
		}
		left = append(left, o.pending...)
		for seq := o.seq; seq < h; seq += o.step {
			left = append(left, seq)
		}
	}
	slices.Sort(left)
	var mine []uint64
	for i := sub; i < len(left); i += p {
		mine = append(mine, left[i])
	}
	return position{seq: h + uint64(sub), step: uint64(p), pending: mine}
}
