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
// progression (a uvarint), then the progression and the numbers it
// still has to call the function for before that, which a subtask that
// resumed at another parallelism has (uvarints: step, a count of single
// numbers and those, the largest block, the origin, a count of spans and
// for each its first number and length). The single numbers are what
// positions written before blocks held; they are read, never written.
// A position of only a sequence number is of a subtask from before
// blocks and rescales, whose step is the parallelism it ran with and
// whose blocks are single numbers (the stride i, i+P, ...).

// span is n consecutive sequence numbers from from.
type span struct{ from, n uint64 }

// position is a decoded read position.
type position struct {
	seq     uint64
	prog    progression
	pending []span
	atEnd   bool
}

func encodePosition(p position) []byte {
	w := codec.NewWriter(nil)
	w.Uvarint(p.seq)
	w.Uvarint(p.prog.step)
	w.Uvarint(0)
	w.Uvarint(p.prog.max)
	w.Uvarint(p.prog.origin)
	w.Uvarint(uint64(len(p.pending)))
	for _, sp := range p.pending {
		w.Uvarint(sp.from)
		w.Uvarint(sp.n)
	}
	return w.Bytes()
}

// decodePosition decodes st, of a subtask that ran with step parallelism.
func decodePosition(st storage.SourceState, parallelism int) (position, error) {
	r := codec.NewReader(st.Position)
	p := position{seq: r.Uvarint(), prog: progression{step: uint64(parallelism), max: 1}, atEnd: st.AtEnd}
	if r.More() {
		p.prog.step = r.Uvarint()
		for range r.Count() {
			p.pending = append(p.pending, span{from: r.Uvarint(), n: 1})
		}
	}
	if r.More() {
		p.prog.max = r.Uvarint()
		p.prog.origin = r.Uvarint()
		for range r.Count() {
			p.pending = append(p.pending, span{from: r.Uvarint(), n: r.Uvarint()})
		}
	} else {
		// Single numbers: any origin of seq's residue gives the stride.
		p.prog.origin = p.seq % max(p.prog.step, 1)
	}
	if err := r.Err(); err != nil {
		return position{}, err
	}
	switch {
	case p.prog.step == 0:
		return position{}, fmt.Errorf("step 0")
	case p.prog.max == 0 || p.prog.max&(p.prog.max-1) != 0:
		return position{}, fmt.Errorf("block size %d is not a power of two", p.prog.max)
	case p.seq < p.prog.origin:
		return position{}, fmt.Errorf("sequence number %d before the origin %d", p.seq, p.prog.origin)
	}
	for _, sp := range p.pending {
		if sp.n == 0 {
			return position{}, fmt.Errorf("empty span at %d", sp.from)
		}
	}
	return p, nil
}

// Snapshot adds the generator's position to a checkpoint.
func (s *Source[T]) Snapshot(snap *checkpoint.Snapshot, node int) {
	pos := encodePosition(position{seq: s.seq, prog: s.prog, pending: s.pending})
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
	if ns.Parallelism == int(s.prog.step) && len(old) == int(s.prog.step) {
		for i, st := range ns.Sources {
			if st.Subtask == s.sub {
				s.resume(old[i])
				return
			}
		}
	}
	s.resume(rescale(old, int(s.prog.step), s.sub))
}

// resume makes the source go on from position p.
func (s *Source[T]) resume(p position) {
	s.prog = p.prog
	s.SetSeq(p.seq)
	s.pending, s.done = p.pending, p.atEnd
	s.publishRound()
}

// Recover, deferred by the chain of a generator source, adds to a panic the
// sequence number of the record being processed.
func (s *Source[T]) Recover() {
	if p := recover(); p != nil {
		fault.PanicWithOrigin(p, fmt.Sprintf("sources.%s, sequence number %d", s.name, s.last))
	}
}
