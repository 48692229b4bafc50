// Package generator is the generator connector: a source that calls a
// function of the user's package for each sequence number, spread over its
// subtasks, optionally at a fixed rate.
package generator

import (
	"strconv"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
)

// maxGeneratorWait is the longest a rate-limited generator sleeps in Next,
// so that its subtask still flushes batches and injects barriers while it
// waits for the next record to be due.
const maxGeneratorWait = 10 * time.Millisecond

// maxGeneratorLag is how far a rate-limited generator may fall behind its
// schedule (held up downstream) and still catch up; beyond it, the
// schedule starts over rather than emitting a burst.
const maxGeneratorLag = time.Second

// Source is one subtask of a generator source: it calls a function
// of the pipeline for the sequence numbers of its blocks (progression.go:
// subtask sub of P takes blocks sub, sub+P, ... of 1, 2, 4, ...
// MaxBlock numbers). After a restore at another parallelism it first
// calls it for the sequence numbers in pending (those the old subtasks
// had not reached when others had), then goes on with its blocks from
// where the old subtasks stopped (rescale.go).
type Source[T any] struct {
	// The pads keep the fields that At and TookRun write at every record
	// or run (seq, left, last, uncounted, n) off the cache lines of the
	// objects allocated next to the source, another subtask's source among
	// them, whose goroutine runs on another core (false sharing).
	_       [64]byte
	name    string
	fn      func(seq uint64) (T, bool)
	ctl     *checkpoint.SourceCtl
	cancel  <-chan struct{}
	sub     int
	pending []span
	// seq is the next number of the progression prog: in block round of
	// subtask psub (sub, unless restored at another parallelism), which
	// has left numbers from seq on.
	seq   uint64
	prog  progression
	psub  uint64
	round uint64
	left  uint64
	// last is the sequence number the function was called for last (At).
	last uint64
	done bool
	// drained latches SourceCtl.Draining, seen by countNow.
	drained bool

	uncounted int

	// With a rate, record n since start is due at start + n*interval.
	interval time.Duration
	start    time.Time
	n        int64
	// chain learns how long the subtask waits for records to be due.
	chain *metrics.Chain
	// pace is shared with the node's other subtasks, which s keeps pace
	// with (pace.go); s looks at it once its round is past through.
	pace    *pace
	through uint64
	_       [64]byte
}

// NewSource prepares subtask sub of the generator source node.
func NewSource[T any](env connector.Env, node, sub int, fn func(seq uint64) (T, bool)) *Source[T] {
	n := env.Node(node)
	s := &Source[T]{
		name:   n.Name,
		fn:     fn,
		cancel: env.Context().Done(),
		sub:    sub,
		prog:   progression{step: uint64(env.Parallelism(node)), max: MaxBlock},
	}
	s.SetSeq(s.prog.start(0, uint64(sub)))
	if r := n.Option("rate"); r != "" {
		rate, err := strconv.ParseFloat(r, 64)
		if err != nil || rate < 0 {
			fault.Abortf("sources.%s: rate wants a number of records per second >= 0, got %q", s.name, r)
		}
		if rate > 0 {
			s.interval = max(time.Duration(float64(time.Second)/rate), 1)
		}
	}
	s.ctl = env.Checkpoints().NewSourceCtl()
	s.chain = env.Metrics().Chain(node, sub)
	s.joinPace(env, node)
	s.restore(env, node)
	return s
}

// Ctl is the source's control block, polled for barriers between records.
func (s *Source[T]) Ctl() *checkpoint.SourceCtl { return s.ctl }

// Done reports that the function has no more records, or that the job
// drains (checkpoint.SourceCtl.AtEnd); it is meaningful after Next
// returned false.
func (s *Source[T]) Done() bool { return s.done || s.ctl.Draining() }

// Seq returns the sequence number of the next record.
func (s *Source[T]) Seq() uint64 {
	if len(s.pending) > 0 {
		return s.pending[0].from
	}
	return s.seq
}

// Index is the number of records the subtask calls the function for
// before sequence number seq, one of its own, when it was not restored
// at another parallelism (it has nothing pending): its record index.
func (s *Source[T]) Index(seq uint64) uint64 { return s.prog.index(seq) }

// SetSeq makes seq the sequence number of the next record, when the
// source resumes from a checkpoint. It should be one of this subtask's.
func (s *Source[T]) SetSeq(seq uint64) {
	s.seq = seq
	s.round, s.psub, s.left = s.prog.locate(seq)
	s.done = false
	s.start = time.Time{}
	s.publishRound()
}

// Next returns the next record. With a rate, it returns false (not done)
// when the next record is not due yet.
func (s *Source[T]) Next() (rec T, ok bool) {
	ok = s.NextInto(&rec)
	return rec, ok
}

// NextInto is Next into rec, for callers that hold the function only
// as a value (tests, Next). Generated chains call the function
// themselves, for the numbers of TakeRun: a static call that Go can
// inline writes the record straight into the chain's variable, where a
// call through s.fn returns it on the stack to be copied (a Nexmark
// event is 72 bytes). rec holds no record when it returns false.
func (s *Source[T]) NextInto(rec *T) bool {
	for {
		seq, n := s.TakeRun()
		if n == 0 {
			return false
		}
		s.At(seq)
		var ok bool
		if *rec, ok = s.fn(seq); ok {
			s.TookRun(1)
			return true
		}
		s.NoRecord()
		if s.done {
			return false
		}
	}
}

// TakeRun returns the sequence numbers to call the function for next: n
// of them from seq, in order, between which the source has nothing to
// do; 0 when there is none now: the function has ended, the job drains,
// or with a rate the next record is not due yet. The caller calls the
// function for them one after the other and accounts for those that gave
// a record with TookRun, before a barrier and at the run's end; for a
// number the function gave no record for, with NoRecord, which ends the
// run. At and Recover name the number a panic came from.
//
// A run ends where the subtask's block does, where the progress count
// is due (whether the job drains, checkpoint.SourceCtl.Draining, is
// looked at then, every connector.CountEvery records, and whenever the
// source waits; from then on TakeRun returns 0 and Done reports it), and
// after one number with a rate or while numbers are pending after a
// rescale. The chain's loop over a run costs a counter where a call per
// record to take a number and another to account for it cost Nexmark q2
// a tenth of its CPU.
func (s *Source[T]) TakeRun() (seq, n uint64) {
	if s.done || s.drained || s.interval > 0 || len(s.pending) > 0 || s.round > s.through {
		return s.takeSlow()
	}
	return s.seq, min(s.left, uint64(connector.CountEvery-s.uncounted))
}

func (s *Source[T]) takeSlow() (uint64, uint64) {
	if s.done || s.drained {
		s.countNow() // what was read after the drain was seen
		return 0, 0
	}
	if s.interval > 0 {
		if !s.due() {
			return 0, 0
		}
		return s.Seq(), 1
	}
	if len(s.pending) > 0 {
		return s.Seq(), 1 // numbers the old subtasks left behind: no one to wait for
	}
	if !s.keepPace() {
		return 0, 0
	}
	return s.seq, min(s.left, uint64(connector.CountEvery-s.uncounted))
}

// At records that the chain calls the function for sequence number seq,
// so that a panic until the next At names it (Recover).
func (s *Source[T]) At(seq uint64) { s.last = seq }

// TookRun accounts for the first n numbers of the run TakeRun returned,
// or of what is left of it after an earlier TookRun, each of which gave
// a record: the records count as emitted (the source's position in a
// checkpoint is after them).
func (s *Source[T]) TookRun(n uint64) {
	if n == 0 {
		return
	}
	if len(s.pending) > 0 { // a run of one
		s.passPending()
		s.counted(1)
		return
	}
	s.seq += n
	if s.left -= n; s.left == 0 {
		s.nextBlock()
	}
	s.counted(n)
}

// NoRecord accounts for the number after those TookRun accounted for,
// which the function gave no record for: one of those pending after a
// rescale, which is skipped, or the function has ended (Done).
func (s *Source[T]) NoRecord() {
	if len(s.pending) > 0 {
		s.passPending()
		return
	}
	s.done = true
	s.publishRound()
	s.chain.InputEnded()
	s.countNow()
}

// nextBlock moves to the first number of the subtask's next block.
func (s *Source[T]) nextBlock() {
	s.round++
	s.seq = s.prog.start(s.round, s.psub)
	s.left = s.prog.size(s.round)
	s.publishRound()
}

// passPending moves past the first pending number.
func (s *Source[T]) passPending() {
	if s.pending[0].n--; s.pending[0].n == 0 {
		s.pending = s.pending[1:]
	} else {
		s.pending[0].from++
	}
}

// counted counts n records returned: never more than take the count to
// connector.CountEvery (TakeRun).
func (s *Source[T]) counted(n uint64) {
	s.n += int64(n)
	if s.uncounted += int(n); s.uncounted >= connector.CountEvery {
		s.countNow()
		s.checkCancel()
	}
}

// countNow adds the records not counted yet to the progress count, and
// latches drained when the job drains: every place that resets
// uncounted looks, so that a drain is seen within CountEvery records or
// at the next wait.
func (s *Source[T]) countNow() {
	if s.uncounted > 0 {
		s.ctl.Count(s.uncounted)
		s.uncounted = 0
	}
	if s.ctl.Draining() && !s.drained {
		s.drained = true
		s.publishRound()
	}
}

// due reports whether the next record is due, after sleeping for it a
// little if it is almost.
func (s *Source[T]) due() bool {
	now := time.Now()
	if s.start.IsZero() {
		s.start, s.n = now, 0
		return true
	}
	at := s.start.Add(time.Duration(s.n) * s.interval)
	wait := at.Sub(now)
	if wait <= 0 {
		if -wait > maxGeneratorLag {
			s.start, s.n = now, 0
		}
		return true
	}
	// Records read so far show up in progress while the source is slow.
	s.countNow()
	s.checkCancel()
	s.chain.Waiting(now, false)
	if wait > maxGeneratorWait {
		time.Sleep(maxGeneratorWait)
		s.chain.Idle(time.Since(now))
		return false
	}
	time.Sleep(wait)
	s.chain.Idle(time.Since(now))
	return true
}

func (s *Source[T]) checkCancel() {
	select {
	case <-s.cancel:
		fault.Abort(fault.ErrCanceled)
	default:
	}
}
