package file

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// Snapshot adds the source's read position to a checkpoint.
func (s *Source[T]) Snapshot(snap *checkpoint.Snapshot, node int) {
	p := s.Position()
	w := codec.NewWriter(nil)
	w.Uvarint(uint64(p.File))
	w.String(p.Name)
	w.Varint(p.Offset)
	w.Varint(p.Line)
	snap.AddSource(node, storage.SourceState{Subtask: s.sub, Position: w.Bytes(), AtEnd: s.done})
}

// restore moves the source to the position of the checkpoint the job
// resumes from.
func (s *Source[T]) restore(node int) {
	st := s.env.Checkpoints().RestoredSource(node, s.sub)
	if st == nil {
		return
	}
	r := codec.NewReader(st.Position)
	p := Position{File: int(r.Uvarint()), Name: r.String(), Offset: r.Varint(), Line: r.Varint()}
	if err := r.Err(); err != nil {
		fault.Abortf("sources.%s[%d]: restore position: %w", s.name, s.sub, err)
	}
	if err := s.Seek(p); err != nil {
		fault.Abort(err)
	}
}

// Recover, deferred by the chain of a file source, adds to a panic the file
// and line of the record being processed.
func (s *Source[T]) Recover() {
	if p := recover(); p != nil {
		p2 := s.Position()
		origin := fmt.Sprintf("sources.%s", s.name)
		if p2.Name != "" {
			origin = fmt.Sprintf("%s:%d", p2.Name, p2.Line-1)
		}
		fault.PanicWithOrigin(p, origin)
	}
}
