package generator

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// Snapshot adds the generator's next sequence number to a checkpoint.
func (s *Source[T]) Snapshot(snap *checkpoint.Snapshot, node int) {
	w := codec.NewWriter(nil)
	w.Uvarint(s.seq)
	snap.AddSource(node, storage.SourceState{Subtask: int(s.seq % s.step), Position: w.Bytes(), AtEnd: s.done})
}

func (s *Source[T]) restore(env connector.Env, node int) {
	st := env.Checkpoints().RestoredSource(node, int(s.seq))
	if st == nil {
		return
	}
	r := codec.NewReader(st.Position)
	seq := r.Uvarint()
	if err := r.Err(); err != nil {
		fault.Abortf("sources.%s[%d]: restore position: %w", s.name, s.seq, err)
	}
	s.SetSeq(seq)
	s.done = st.AtEnd
}

// Recover, deferred by the chain of a generator source, adds to a panic the
// sequence number of the record being processed.
func (s *Source[T]) Recover() {
	if p := recover(); p != nil {
		fault.PanicWithOrigin(p, fmt.Sprintf("sources.%s, sequence number %d", s.name, s.seq-s.step))
	}
}
