package drive

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// Source is a source subtask that reads what the test driver pushes. It
// has the methods the generated loop of a source chain calls: Next, Done,
// Ctl, Snapshot, Recover, and Watermarks and Timestamp for event time.
//
// The loop runs in its own goroutine, as a coroutine of the driver: Next
// tells the driver that the subtask waits, and waits for its command.
// After a record it first returns false once, without waiting, so that
// the loop hands its partial batches on (and with them everything
// downstream runs) before the driver goes on.
type Source[T any] struct {
	r    *run
	node int
	sub  int
	ctl  *checkpoint.SourceCtl
	wm   *eventtime.Watermarks
	cmds chan command
	done <-chan struct{}
	// owe is set after a record: the next Next returns false at once.
	owe bool
	// ts is the time of the record just read (Timestamp).
	ts int64
	// ending is set once the driver ended the input.
	ending bool
}

// NewSource prepares subtask sub of source node of a job that a driver
// runs.
func NewSource[T any](j *job.Job, node, sub int) *Source[T] {
	r := runOf(j)
	s := &Source[T]{r: r, node: node, sub: sub, ctl: j.Checkpoints().NewSourceCtl(), cmds: make(chan command), done: j.Done()}
	if st := j.Checkpoints().RestoredSource(node, sub); st != nil {
		rd := codec.NewReader(st.Position)
		pos := rd.Uvarint()
		if err := rd.Err(); err != nil {
			fault.Abortf("sources.%s[%d]: restore position: %w", j.Node(node).Name, sub, err)
		}
		r.restored = int(pos)
	}
	r.register(node, sub, s)
	return s
}

// send hands the subtask a command; it waits for one in Next.
func (s *Source[T]) send(c command) {
	select {
	case s.cmds <- c:
	case <-s.done:
	}
}

// Ctl is the subtask's control block.
func (s *Source[T]) Ctl() *checkpoint.SourceCtl { return s.ctl }

// Watermarks makes the subtask's watermark generator, which sends the
// watermarks the driver sets, restored from the checkpoint.
func (s *Source[T]) Watermarks(t *checkpoint.Task, node int) *eventtime.Watermarks {
	s.wm = eventtime.NewWatermarks(t.Node(node).Watermark)
	t.RestoreGenerator(node, s.wm)
	s.wm.Manual()
	return s.wm
}

// Timestamp is the time the driver gave the record just read.
func (s *Source[T]) Timestamp() int64 { return s.ts }

// Next returns the next record the driver pushes; false when the driver
// asks for something else (a watermark, a barrier, the end).
func (s *Source[T]) Next() (T, bool) {
	var zero T
	if s.owe {
		s.owe = false
		return zero, false
	}
	s.r.wake()
	var c command
	select {
	case c = <-s.cmds:
	case <-s.done:
		fault.Abort(fault.ErrCanceled)
	}
	switch c.kind {
	case cmdRecord:
		rec, ok := c.rec.(T)
		if !ok {
			fault.Abortf("sources.%d: the driver pushed a %T, the source reads %T", s.node, c.rec, zero)
		}
		s.owe = true
		s.ts = c.ts
		s.ctl.Count(1)
		return rec, true
	case cmdWatermark:
		if s.wm != nil { // a source without event time has no watermark (WatermarkAll)
			s.wm.Set(c.ts)
		}
	case cmdEnd:
		s.ending = true
	}
	return zero, false
}

// Done reports whether the driver has ended the input.
func (s *Source[T]) Done() bool { return s.ending }

// Snapshot adds the subtask's position to a checkpoint: the number of
// commands the driver had given when the checkpoint was taken, from
// which a restore replays.
func (s *Source[T]) Snapshot(snap *checkpoint.Snapshot, node int) {
	w := codec.NewWriter(nil)
	w.Uvarint(uint64(s.r.pos))
	snap.AddSource(node, storage.SourceState{Subtask: s.sub, Position: w.Bytes(), AtEnd: s.ending})
}

// OnDeadLetter is for a source that sends malformed records to its dead
// letters: the driver pushes typed records, none malformed.
func (s *Source[T]) OnDeadLetter(func(string)) {}

// Recover is deferred by the loop; a panic goes on to the job, which
// fails the test with it.
func (s *Source[T]) Recover() {}

// String names the subtask.
func (s *Source[T]) String() string { return fmt.Sprintf("driver source %d[%d]", s.node, s.sub) }
