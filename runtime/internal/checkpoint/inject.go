package checkpoint

import (
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// SourceCtl is the control block of one source subtask: the barrier the
// coordinator wants injected (or a request to flush), whether the subtask
// has read all its input, and the count of records read, for the progress
// line.
type SourceCtl struct {
	barrier   atomic.Int64
	records   atomic.Int64
	malformed atomic.Int64
	cp        *Checkpointer
	ended     bool
	drained   bool
	wait      *time.Timer
	// yields is set when the program runs on one processor (GOMAXPROCS
	// 1, as Go sets it in a container limited to one CPU). There a
	// source's loop, which never blocks while its input lasts and whose
	// chain takes its records by calls, leaves the collector's worker
	// no turn until the scheduler preempts it, every 10 ms, and each
	// collection marks, write barrier on, for that long. On more
	// processors the worker runs on another one, and yields cost more
	// than they gave (docs/runtime.md, One processor: sources yield, has
	// the figures).
	yields    bool
	unyielded int // records read since the last yield
}

// NewSourceCtl registers a source subtask.
func (c *Checkpointer) NewSourceCtl() *SourceCtl {
	s := &SourceCtl{cp: c, yields: goruntime.GOMAXPROCS(0) == 1}
	c.mu.Lock()
	c.sources = append(c.sources, s)
	c.mu.Unlock()
	return s
}

// Poll returns the id of a barrier to inject before the next record, -1
// when the subtask should hand its partial batches on (Linger has passed),
// or 0. Sources call it between records; it costs one atomic load.
func (s *SourceCtl) Poll() int64 {
	if s.barrier.Load() == 0 {
		return 0
	}
	return s.barrier.Swap(0)
}

// BarrierDue reports whether the coordinator has asked for a barrier that
// the subtask has not injected yet.
func (s *SourceCtl) BarrierDue() bool { return s.barrier.Load() > 0 }

// inject asks the source subtask to inject barrier id.
func (s *SourceCtl) inject(id int64) { s.barrier.Store(id) }

// RequestFlush asks every source subtask to hand its partial batches on at
// its next Poll, unless a barrier is due, which flushes them anyway.
func (c *Checkpointer) RequestFlush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sources {
		s.barrier.CompareAndSwap(0, -1)
	}
}

// atEndWait is how long a source at the end of its input waits for the
// other sources before it looks for a barrier again.
const atEndWait = 10 * time.Millisecond

// AtEnd is called by a source subtask that has read all of its input. It
// reports whether the subtask may end: once every source subtask of the job
// is at its end. Until then the subtask stays, injecting the barriers of the
// checkpoints taken meanwhile (with its final position), so that every
// checkpoint has every subtask and the ones that ended early need no
// special case.
//
// While the job drains (a savepoint with drain), a source reads nothing
// and its Done reports true, so it ends event time and calls AtEnd, which
// then does not end it: it waits, injecting the savepoint's barrier, and
// the job stops at the savepoint.
func (s *SourceCtl) AtEnd() bool {
	c := s.cp
	if !s.ended && c.draining.Load() {
		if !s.drained {
			s.drained = true
			c.sourceDrained()
		}
		if s.barrier.Load() == 0 {
			s.pause()
		}
		return false
	}
	if !s.ended {
		s.ended = true
		c.sourceAtEnd()
	}
	if !c.Enabled() {
		return true
	}
	if s.barrier.Load() != 0 {
		return false
	}
	if c.allAtEnd() {
		return true
	}
	s.pause()
	return false
}

// pause waits atEndWait, or less if every source ends meanwhile. A
// driven job (Options.Manual) never waits: its driver runs the sources
// one at a time, and comes back to this one once the others have ended.
func (s *SourceCtl) pause() {
	c := s.cp
	if c.manual {
		return
	}
	if s.wait == nil {
		s.wait = time.NewTimer(atEndWait)
	} else {
		s.wait.Reset(atEndWait)
	}
	select {
	case <-c.allEnded:
	case <-s.wait.C:
	case <-c.ctx.Done():
		fault.Abort(fault.ErrCanceled)
	}
}

// Draining reports whether the job drains for a savepoint: a source reads
// nothing more and reports that it is done (see AtEnd). One atomic load.
func (s *SourceCtl) Draining() bool { return s.cp.draining.Load() }

// sourceDrained records that a source subtask has stopped reading and
// ended event time for a drain.
func (c *Checkpointer) sourceDrained() {
	c.drained.Add(1)
	c.checkDrained()
}

// checkDrained closes allDrained once every source subtask has drained or
// is at the end of its input.
func (c *Checkpointer) checkDrained() {
	c.mu.Lock()
	n := len(c.sources)
	c.mu.Unlock()
	if c.drained.Load()+c.atEnd.Load() >= int64(n) {
		c.drainOnce.Do(func() { close(c.allDrained) })
	}
}

// Count adds n records to the progress count. Sources call it once per
// batch of reads, not per record. On one processor it also yields it
// every yieldEvery records (see yields).
func (s *SourceCtl) Count(n int) {
	s.records.Add(int64(n))
	if !s.yields {
		return
	}
	if s.unyielded += n; s.unyielded >= yieldEvery {
		s.unyielded = 0
		goruntime.Gosched()
	}
}

// yieldEvery is how many records a source reads between two yields of
// the processor (yields). A yield takes about 110 ns
// (BenchmarkSourceCountYield); Nexmark q7 reads this many in about
// 0.4 ms, so its yields cost 0.03% of its CPU.
const yieldEvery = 4 * 1024

// Malformed counts one malformed record that the source skipped or sent
// to its dead letters.
func (s *SourceCtl) Malformed() { s.malformed.Add(1) }

// MalformedRecords is the number of malformed records the sources skipped
// or sent to their dead letters.
func (c *Checkpointer) MalformedRecords() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, s := range c.sources {
		n += s.malformed.Load()
	}
	return n
}

// RecordsRead is the number of records every source subtask has read.
func (c *Checkpointer) RecordsRead() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, s := range c.sources {
		n += s.records.Load()
	}
	return n
}

// sourceAtEnd records that a source subtask has read all of its input.
func (c *Checkpointer) sourceAtEnd() {
	c.mu.Lock()
	n := len(c.sources)
	c.mu.Unlock()
	if c.atEnd.Add(1) == int64(n) {
		close(c.allEnded)
	}
	if c.draining.Load() {
		c.checkDrained()
	}
}

// allAtEnd reports whether every source subtask has read all its input.
func (c *Checkpointer) allAtEnd() bool {
	select {
	case <-c.allEnded:
		return true
	default:
		return false
	}
}
