package generator

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/connector"
)

// Subtasks of a generator keep pace with each other: one that is more
// than paceLead rounds of blocks ahead of the slowest waits for it.
//
// Nothing else ties them together. A keyed operator downstream takes the
// records of all of them, and its event time is the slowest one's
// watermark, so whatever one subtask runs ahead by waits in the keyed
// state: Nexmark q4 at parallelism 2, whose two source subtasks drifted
// apart by up to 15 ms of event time (150,000 events), held 9,400 timers
// per closing subtask on average against 650 at parallelism 1 (early bids
// that wait for the slower subtask's auctions and watermark), and its
// peak memory varied from 30 to 58 MiB between runs (28-29 MiB in
// pace). Kept within a round, the subtasks' positions are at most two
// rounds apart, 2*P*MaxBlock numbers (the fast one at the end of its
// block of round r+1, the slowest at the start of its block of round r):
// at P=2 65,536, 6.6 ms of Nexmark's event time at 10M events a second.
//
// A subtask that is ahead returns no run from TakeRun for a while
// (paceWait), as a subtask with a rate does when its next record is not
// due: its chain flushes, passes barriers and watermarks on, and asks
// again. A subtask whose function has ended, or that drains, holds no
// one back. With a rate the subtasks are paced by the clock already, and
// at parallelism 1 there is no one to keep pace with.

// paceLead is how many rounds a subtask may be ahead of the slowest.
const paceLead = 1

// paceWait is how long a subtask that is ahead waits before it looks
// again: a block takes the slowest subtask about a millisecond and a half
// of Nexmark's generator, so a few looks per block.
const paceWait = 200 * time.Microsecond

// pace is the rounds the subtasks of one generator node are in, shared by
// them (connector.Sharer).
type pace struct {
	rounds []paddedRound
}

// paddedRound keeps each subtask's round, written at every block, off the
// cache line of the others' (false sharing).
type paddedRound struct {
	_     [64]byte
	round atomic.Uint64
}

// paceKey names a generator node's pace in the run's shared values.
type paceKey struct{ node int }

// joinPace makes s keep pace with the other subtasks of its node when they
// run at once: in a job's run (a connector.Sharer) at parallelism above 1,
// without a rate.
func (s *Source[T]) joinPace(env connector.Env, node int) {
	s.through = math.MaxUint64
	sh, ok := env.(connector.Sharer)
	p := env.Parallelism(node)
	if !ok || p < 2 || s.interval > 0 {
		return
	}
	s.pace = sh.Shared(paceKey{node}, func() any { return &pace{rounds: make([]paddedRound, p)} }).(*pace)
	s.through = 0
	s.publishRound()
}

// publishRound tells the other subtasks the round s is in; an ended
// subtask is in the last one.
func (s *Source[T]) publishRound() {
	if s.pace == nil {
		return
	}
	r := s.round
	if s.done || s.drained {
		r = math.MaxUint64
	}
	s.pace.rounds[s.sub].round.Store(r)
}

// keepPace reports whether s may take its next run: it is at most
// paceLead rounds ahead of the slowest subtask. If it is further ahead it
// waits paceWait and reports false (TakeRun returns no run).
func (s *Source[T]) keepPace() bool {
	slowest := uint64(math.MaxUint64)
	for i := range s.pace.rounds {
		slowest = min(slowest, s.pace.rounds[i].round.Load())
	}
	// slowest is at most s's own round, which s publishes.
	if s.round <= slowest+paceLead {
		// Until s is past that round no look is needed: the slowest
		// only moves on.
		s.through = slowest + paceLead
		return true
	}
	now := time.Now()
	// Records read so far show up in progress while the subtask waits,
	// and a drain or a failure is seen.
	s.countNow()
	s.checkCancel()
	if s.drained {
		return false
	}
	s.chain.Waiting(now, false)
	time.Sleep(paceWait)
	s.chain.Idle(time.Since(now))
	return false
}
