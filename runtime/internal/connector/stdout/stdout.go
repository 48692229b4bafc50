// Package stdout is the stdout connector: a sink that prints records on
// standard output, one per line. It is at-least-once: what it printed
// before a crash is printed again after the recovery.
package stdout

import (
	"io"
	"os"
	"sync"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
)

// stdout is where stdout sinks write; tests replace it. stdoutMu makes the
// write of a subtask's buffer whole: lines of different subtasks never mix.
var (
	stdoutMu sync.Mutex
	stdout   io.Writer = os.Stdout
)

// stdoutFlushAt is the buffer size at which a stdout sink writes without
// waiting for Flush: the bound on what one subtask holds back.
const stdoutFlushAt = 64 << 10

// Sink is one subtask of a stdout sink. Several subtasks print to the
// same standard output, so each collects whole lines and writes them in one
// piece.
type Sink[T any] struct {
	name string
	enc  format.Encoder[T]
	buf  []byte
	m    *metrics.Node
}

// NewSink prepares subtask sub of the stdout sink node, encoding
// records with enc; enc may be nil when the caller encodes every record
// itself (Buf, Wrote) and never calls Write.
func NewSink[T any](env connector.Env, node, sub int, enc format.Encoder[T]) *Sink[T] {
	return &Sink[T]{name: env.Node(node).Name, enc: enc, buf: make([]byte, 0, stdoutFlushAt+4<<10), m: env.Metrics().Node(node, sub)}
}

// Write prints one record.
func (s *Sink[T]) Write(v T) {
	b, err := s.enc(s.buf, v)
	if err != nil {
		fault.Abortf("sinks.%s: encode record: %w", s.name, err)
	}
	s.buf = append(b, '\n')
	if len(s.buf) >= stdoutFlushAt {
		s.Flush()
	}
}

// Buf is the sink's buffer, for generated code that encodes a record
// into it by reference, with its encoder called statically (Write takes
// the record by value and calls the encoder through a function value:
// a large record is copied on the way, and each copy right after the
// stores of the argument registers stalls). Hand what the encoder
// returns to Wrote.
func (s *Sink[T]) Buf() []byte { return s.buf }

// Wrote takes back the buffer that Buf returned, with one more record
// encoded at its end, and what the encoder returned.
func (s *Sink[T]) Wrote(b []byte, err error) {
	if err != nil {
		fault.Abortf("sinks.%s: encode record: %w", s.name, err)
	}
	s.buf = append(b, '\n')
	if len(s.buf) >= stdoutFlushAt {
		s.Flush()
	}
}

// Flush writes the buffered lines.
func (s *Sink[T]) Flush() {
	if len(s.buf) == 0 {
		return
	}
	stdoutMu.Lock()
	_, err := stdout.Write(s.buf)
	stdoutMu.Unlock()
	s.m.BytesOut.Add(uint64(len(s.buf)))
	s.buf = s.buf[:0]
	if err != nil {
		fault.Abortf("sinks.%s: write standard output: %w", s.name, err)
	}
}

// PreCommit writes what is buffered: standard output cannot take back what
// it printed, so a stdout sink is at-least-once (records after the last
// checkpoint are printed again after a restart).
func (s *Sink[T]) PreCommit(*checkpoint.Snapshot, int) { s.Flush() }

// End writes what is buffered.
func (s *Sink[T]) End() { s.Flush() }
