package runtime

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// writeBufferSize is the write buffer of a file sink.
const writeBufferSize = 256 << 10

// FileSink is one subtask of a file sink: it writes its records, one per
// line, into its own part file of the sink's directory.
type FileSink[T any] struct {
	name string
	enc  Encoder[T]
	part *partFile
}

// NewFileSink prepares subtask sub of the file sink node, encoding records
// with enc. It creates the directory and the subtask's part file.
func NewFileSink[T any](j *Job, node, sub int, enc Encoder[T]) *FileSink[T] {
	n := j.Node(node)
	s := &FileSink[T]{name: n.Name, enc: enc}
	dir := n.Option("path")
	if dir == "" {
		Abortf("sinks.%s: path is empty", s.name)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		Abortf("sinks.%s: %w", s.name, err)
	}
	part, err := createPart(filepath.Join(dir, fmt.Sprintf("part-%d-0", sub)))
	if err != nil {
		Abortf("sinks.%s: %w", s.name, err)
	}
	s.part = part
	return s
}

// Write writes one record.
func (s *FileSink[T]) Write(v T) {
	w := s.part.w
	// Encoding straight into the writer's free space spares a copy.
	b, err := s.enc(w.AvailableBuffer(), v)
	if err != nil {
		Abortf("sinks.%s: encode record: %w", s.name, err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		s.fail(err)
	}
}

// Flush hands the buffered records to the operating system.
func (s *FileSink[T]) Flush() {
	if err := s.part.w.Flush(); err != nil {
		s.fail(err)
	}
}

// Barrier is called at checkpoint barrier id.
func (s *FileSink[T]) Barrier(id int64) { s.Flush() }

// End writes what is buffered and closes the part file.
func (s *FileSink[T]) End() {
	if s.part == nil {
		return
	}
	p := s.part
	s.part = nil
	if err := p.close(); err != nil {
		Abortf("sinks.%s: %w", s.name, err)
	}
}

func (s *FileSink[T]) fail(err error) {
	s.part.f.Close()
	Abortf("sinks.%s: %w", s.name, err)
}

// partFile is a part file being written. It is apart from FileSink so that
// the files a sink writes can come and go (one per checkpoint, renamed at
// commit) around the same writing code.
type partFile struct {
	path string
	f    *os.File
	w    *bufio.Writer
}

func createPart(path string) (*partFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &partFile{path: path, f: f, w: bufio.NewWriterSize(f, writeBufferSize)}, nil
}

// close flushes and closes the file; errors name it.
func (p *partFile) close() error {
	err := p.w.Flush()
	if cerr := p.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}
