package drive

import (
	"slices"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/job"
)

// Sink is a sink subtask whose records the test driver keeps, as a
// transactional sink would: what it writes between two checkpoints is
// staged at the first one's barrier (PreCommit) and committed when that
// checkpoint completes. It has the methods generated code calls: Write,
// Flush, PreCommit and End.
type Sink[T any] struct {
	out *store[T]
	sub int
}

// store is what a sink node's subtasks wrote, over every run.
type store[T any] struct {
	committed []T
	// subs are the subtasks' records not committed yet, of this run.
	subs map[int]*pending[T]
}

// pending is a sink subtask's records that no checkpoint committed yet.
type pending[T any] struct {
	staged []batch[T]
	cur    []T
}

// batch is what a sink subtask wrote before the barrier of checkpoint id.
type batch[T any] struct {
	id    int64
	final bool
	recs  []T
}

// NewSink prepares subtask sub of sink node of a job that a driver runs.
func NewSink[T any](j *job.Job, node, sub int) *Sink[T] {
	d := runOf(j).d
	o, _ := d.outs[node].(*store[T])
	if o == nil {
		o = &store[T]{subs: map[int]*pending[T]{}}
		d.outs[node] = o
	}
	if o.subs[sub] == nil {
		o.subs[sub] = &pending[T]{}
	}
	return &Sink[T]{out: o, sub: sub}
}

// Write takes one record.
func (s *Sink[T]) Write(v T) {
	p := s.out.subs[s.sub]
	p.cur = append(p.cur, v)
}

// Flush does nothing: the driver sees every record at once.
func (s *Sink[T]) Flush() {}

// PreCommit stages what the subtask wrote since the last checkpoint, for
// checkpoint snap.
func (s *Sink[T]) PreCommit(snap *checkpoint.Snapshot, node int) {
	p := s.out.subs[s.sub]
	p.staged = append(p.staged, batch[T]{id: snap.ID, final: snap.Final, recs: p.cur})
	p.cur = nil
}

// End closes the subtask: its final snapshot staged the rest.
func (s *Sink[T]) End() {}

func (o *store[T]) commit(id int64) {
	for _, sub := range o.order() {
		p := o.subs[sub]
		kept := p.staged[:0]
		for _, b := range p.staged {
			if id < 0 || (!b.final && b.id <= id) {
				o.committed = append(o.committed, b.recs...)
			} else {
				kept = append(kept, b)
			}
		}
		p.staged = kept
	}
}

func (o *store[T]) abort() {
	for _, p := range o.subs {
		p.staged, p.cur = nil, nil
	}
}

// order is the subtasks in order.
func (o *store[T]) order() []int {
	var subs []int
	for sub := range o.subs {
		subs = append(subs, sub)
	}
	slices.Sort(subs)
	return subs
}

// emitted is every record the sink wrote that no restore dropped:
// committed, then staged, then written since the last checkpoint, each
// subtask by subtask.
func (o *store[T]) emitted() []T {
	out := slices.Clone(o.committed)
	for _, sub := range o.order() {
		for _, b := range o.subs[sub].staged {
			out = append(out, b.recs...)
		}
	}
	for _, sub := range o.order() {
		out = append(out, o.subs[sub].cur...)
	}
	return out
}

// Emitted is every record sink node emitted that no restore dropped,
// committed or not.
func Emitted[T any](d *Driver, node int) []T {
	o, _ := d.outs[node].(*store[T])
	if o == nil {
		return nil
	}
	return o.emitted()
}

// Committed is every record of sink node that a completed checkpoint
// committed: what an exactly-once sink has made visible.
func Committed[T any](d *Driver, node int) []T {
	o, _ := d.outs[node].(*store[T])
	if o == nil {
		return nil
	}
	return slices.Clone(o.committed)
}
