package generator

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// A generator subtask's position is the next sequence number of its
// progression (a uvarint). A subtask that resumed at another parallelism
// adds its step and the sequence numbers it still has to call the
// function for before that (uvarints: step, count, numbers). A position
// without them is of a subtask whose step is the parallelism it ran with.

// position is a decoded read position.
type position struct {
	seq, step uint64
	pending   []uint64
	atEnd     bool
}

func encodePosition(p position) []byte {
	w := codec.NewWriter(nil)
	w.Uvarint(p.seq)
	if len(p.pending) > 0 {
		w.Uvarint(p.step)
		w.Uvarint(uint64(len(p.pending)))
		for _, seq := range p.pending {
			w.Uvarint(seq)
		}
	}
	return w.Bytes()
}

// decodePosition decodes st, of a subtask that ran with step parallelism.
func decodePosition(st storage.SourceState, parallelism int) (position, error) {
	r := codec.NewReader(st.Position)
	p := position{seq: r.Uvarint(), step: uint64(parallelism), atEnd: st.AtEnd}
	if r.More() {
		p.step = r.Uvarint()
		n := r.Count()
		p.pending = make([]uint64, 0, n)
		for range n {
			p.pending = append(p.pending, r.Uvarint())
		}
	}
	if err := r.Err(); err != nil {
		return position{}, err
	}
	if p.step == 0 {
		return position{}, fmt.Errorf("step 0")
	}
	return p, nil
}

// Snapshot adds the generator's position to a checkpoint.
func (s *Source[T]) Snapshot(snap *checkpoint.Snapshot, node int) {
	pos := encodePosition(position{seq: s.seq, step: s.step, pending: s.pending})
	snap.AddSource(node, storage.SourceState{Subtask: s.sub, Position: pos, AtEnd: s.done})
}

func (s *Source[T]) restore(env connector.Env, node int) {
	ns := env.Checkpoints().RestoredNode(node)
	if ns == nil || len(ns.Sources) == 0 {
		return
	}
	var old []position
	for _, st := range ns.Sources {
		p, err := decodePosition(st, ns.Parallelism)
		if err != nil {
			fault.Abortf("sources.%s[%d]: restore position: %w", s.name, s.sub, err)
		}
		old = append(old, p)
	}
	if ns.Parallelism == int(s.step) && len(old) == int(s.step) {
		for i, st := range ns.Sources {
			if st.Subtask == s.sub {
				p := old[i]
				s.SetSeq(p.seq)
				s.step, s.pending, s.done = p.step, p.pending, p.atEnd
				return
			}
		}
	}
	p := rescale(old, int(s.step), s.sub)
	s.SetSeq(p.seq)
	s.pending, s.done = p.pending, p.atEnd
}

// Recover, deferred by the chain of a generator source, adds to a panic the
// sequence number of the record being processed.
func (s *Source[T]) Recover() {
	if p := recover(); p != nil {
		fault.PanicWithOrigin(p, fmt.Sprintf("sources.%s, sequence number %d", s.name, s.last))
	}
}
