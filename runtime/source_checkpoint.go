package runtime

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
)

// Snapshot adds the source's read position to a checkpoint.
func (s *FileSource[T]) Snapshot(snap *Snapshot, node int) {
	p := s.Position()
	w := codec.NewWriter(nil)
	w.Uvarint(uint64(p.File))
	w.String(p.Name)
	w.Varint(p.Offset)
	w.Varint(p.Line)
	snap.sources = append(snap.sources, sourceSnapshot{node: node, state: SourceState{Subtask: s.sub, Position: w.Bytes(), AtEnd: s.done}})
}

// restore moves the source to the position of the checkpoint the job
// resumes from.
func (s *FileSource[T]) restore(j *Job, node int) {
	st := j.RestoredSource(node, s.sub)
	if st == nil {
		return
	}
	r := codec.NewReader(st.Position)
	p := FilePosition{File: int(r.Uvarint()), Name: r.String(), Offset: r.Varint(), Line: r.Varint()}
	if err := r.Err(); err != nil {
		Abortf("sources.%s[%d]: restore position: %w", s.name, s.sub, err)
	}
	if err := s.Seek(p); err != nil {
		Abort(err)
	}
}

// Snapshot adds the generator's next sequence number to a checkpoint.
func (s *GeneratorSource[T]) Snapshot(snap *Snapshot, node int) {
	w := codec.NewWriter(nil)
	w.Uvarint(s.seq)
	snap.sources = append(snap.sources, sourceSnapshot{node: node, state: SourceState{Subtask: int(s.seq % s.step), Position: w.Bytes(), AtEnd: s.done}})
}

func (s *GeneratorSource[T]) restore(j *Job, node int) {
	st := j.RestoredSource(node, int(s.seq))
	if st == nil {
		return
	}
	r := codec.NewReader(st.Position)
	seq := r.Uvarint()
	if err := r.Err(); err != nil {
		Abortf("sources.%s[%d]: restore position: %w", s.name, s.seq, err)
	}
	s.SetSeq(seq)
	s.done = st.AtEnd
}

// Recover, deferred by the chain of a file source, adds to a panic the file
// and line of the record being processed.
func (s *FileSource[T]) Recover() {
	if p := recover(); p != nil {
		p2 := s.Position()
		origin := fmt.Sprintf("sources.%s", s.name)
		if p2.Name != "" {
			origin = fmt.Sprintf("%s:%d", p2.Name, p2.Line-1)
		}
		panicWithOrigin(p, origin)
	}
}

// Recover, deferred by the chain of a generator source, adds to a panic the
// sequence number of the record being processed.
func (s *GeneratorSource[T]) Recover() {
	if p := recover(); p != nil {
		panicWithOrigin(p, fmt.Sprintf("sources.%s, sequence number %d", s.name, s.seq-s.step))
	}
}
