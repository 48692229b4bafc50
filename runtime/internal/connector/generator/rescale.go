package generator

import "slices"

// dealChunk is the most numbers of one run that rescale deals to one new
// subtask before the next takes its turn.
const dealChunk = 1 << 10

// rescale gives subtask sub of p the share of the sequence numbers that
// the old subtasks, at their positions old, had not called the function
// for yet: nothing twice, nothing skipped.
//
// The old subtasks' progressions (one origin, step and block size for
// all, their blocks covering every number from the origin on) together
// hold every number from H, the highest next number of any old subtask
// (of ended subtasks too), on: from H the new subtasks take their blocks
// of a progression that starts at H. What lies below H and was not
// called yet (each subtask's pending numbers, and its blocks from its
// position up to H) is sorted and dealt out in runs of at most dealChunk
// numbers, every p-th run to each new subtask, which calls the function
// for them first. A subtask whose function had returned false (at its
// end) contributes nothing: a generator's function is taken to end for
// good (false from some sequence number on).
func rescale(old []position, p, sub int) position {
	var h uint64
	allEnded := true
	for _, o := range old {
		// An ended subtask's seq counts too: below it, it called the
		// function for every number of its progression.
		h = max(h, o.seq)
		allEnded = allEnded && o.atEnd
	}
	prog := progression{origin: h, step: uint64(p), max: MaxBlock}
	next := position{seq: prog.start(0, uint64(sub)), prog: prog, atEnd: allEnded}
	if allEnded {
		return next
	}
	var left []span
	for _, o := range old {
		if o.atEnd {
			continue
		}
		left = append(left, o.pending...)
		round, osub, n := o.prog.locate(o.seq)
		for seq := o.seq; seq < h; {
			left = append(left, span{from: seq, n: min(n, h-seq)})
			round++
			seq, n = o.prog.start(round, osub), o.prog.size(round)
		}
	}
	slices.SortFunc(left, func(a, b span) int {
		switch {
		case a.from < b.from:
			return -1
		case a.from > b.from:
			return 1
		}
		return 0
	})
	i := 0
	for _, sp := range left {
		for sp.n > 0 {
			n := min(sp.n, dealChunk)
			if i%p == sub {
				next.pending = append(next.pending, span{from: sp.from, n: n})
			}
			i++
			sp.from += n
			sp.n -= n
		}
	}
	return next
}
