package generator

import "math/bits"

// MaxBlock is the longest run of consecutive sequence numbers that one
// subtask of a generator takes.
//
// Why blocks, not the stride i, i+P, i+2P, ...: a record often refers to
// records made a little before it (a Nexmark bid to an auction some
// hundred events earlier). With a stride, nearly every such pair is split
// over two subtasks, and whichever reaches a keyed operator first is
// there first: at parallelism 2, 22-30% of q4's bids came before their
// auction and waited in the keyed state (6% at parallelism 1), which
// cost q4 a tenth of its CPU. Blocks keep such pairs in one subtask, in
// order, except near a block's start. A stride also gives every subtask
// the same positions in a periodic pattern (Nexmark's person is always
// number 0 of 50, so subtask 0 of 2 generated every person and did 8%
// more of the generator's work); within a block every position comes.
// 16384 numbers are at most 1.6 ms of Nexmark's event time at its
// published rate, by which one subtask runs ahead of the next.
const MaxBlock = 1 << 14

// progression is how a generator's sequence numbers from origin on are
// dealt to step subtasks: in rounds, each subtask taking one block of
// consecutive numbers per round, in subtask order. The blocks double
// from round to round, from 1 up to max: the first numbers still
// interleave (a short run, as in tests, keeps every subtask busy), a
// long one runs in blocks of max. With max 1 it is the stride i, i+P,
// ... of positions from before blocks (max a power of two).
type progression struct {
	origin, step, max uint64
}

// ramp is the number of rounds whose blocks grow: round r < ramp has
// blocks of 2^r, every later one of max.
func (g progression) ramp() uint64 { return uint64(bits.TrailingZeros64(g.max)) }

// size is the block size of round r.
func (g progression) size(r uint64) uint64 {
	if r >= g.ramp() {
		return g.max
	}
	return 1 << r
}

// start is the first number of subtask sub's block in round r.
func (g progression) start(r, sub uint64) uint64 {
	n := g.ramp()
	var at uint64
	if r <= n {
		at = g.step * (1<<r - 1)
	} else {
		at = g.step*(1<<n-1) + (r-n)*g.step*g.max
	}
	return g.origin + at + sub*g.size(r)
}

// locate finds seq (at or after origin) in the progression: its round,
// the subtask whose block holds it, and how many numbers of that block
// are left from seq on (seq included).
func (g progression) locate(seq uint64) (round, sub, left uint64) {
	m := seq - g.origin
	n := g.ramp()
	if m < g.step*(1<<n-1) {
		round = uint64(bits.Len64(m/g.step+1)) - 1
	} else {
		round = n + (m-g.step*(1<<n-1))/(g.step*g.max)
	}
	in := seq - g.start(round, 0)
	size := g.size(round)
	return round, in / size, size - in%size
}

// index is the number of numbers of seq's subtask that come before seq in
// the progression.
func (g progression) index(seq uint64) uint64 {
	r, _, left := g.locate(seq)
	n := g.ramp()
	before := uint64(1)<<min(r, n) - 1
	if r > n {
		before += (r - n) * g.max
	}
	return before + g.size(r) - left
}
