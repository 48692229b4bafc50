package stdout

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// lineWriter checks that every write holds whole lines, and keeps them.
type lineWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	err    error
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if !w.mu.TryLock() {
		panic("concurrent writes to standard output")
	}
	defer w.mu.Unlock()
	w.writes++
	if len(p) > 0 && p[len(p)-1] != '\n' {
		w.err = errors.New("a write ends in the middle of a line")
	}
	return w.buf.Write(p)
}

func withStdout(t *testing.T, w *lineWriter) {
	old := stdout
	stdout = w
	t.Cleanup(func() { stdout = old })
}

func TestStdoutSinkDoesNotInterleave(t *testing.T) {
	w := new(lineWriter)
	withStdout(t, w)
	const p, n = 8, 4000
	j := connectortest.New(t, p, connectortest.SinkNode("print", "stdout", nil))
	var wg sync.WaitGroup
	for sub := range p {
		wg.Go(func() {
			s := NewSink(j, 0, sub, format.EncodeString)
			r := rand.New(rand.NewPCG(uint64(sub), 0))
			for i := range n {
				s.Write(fmt.Sprintf("%d %d %s", sub, i, strings.Repeat("x", r.IntN(200))))
				if r.IntN(100) == 0 {
					s.Flush()
				}
			}
			s.End()
		})
	}
	wg.Wait()
	if w.err != nil {
		t.Fatal(w.err)
	}
	next := make([]int, p)
	for _, line := range strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n") {
		var sub, i int
		var xs string
		if _, err := fmt.Sscanf(line+"x", "%d %d %s", &sub, &i, &xs); err != nil || strings.Trim(xs, "x") != "" {
			t.Fatalf("mangled line %q", line)
		}
		if i != next[sub] {
			t.Fatalf("subtask %d: line %d after line %d", sub, i, next[sub]-1)
		}
		next[sub]++
	}
	for sub, got := range next {
		if got != n {
			t.Errorf("subtask %d: %d lines, want %d", sub, got, n)
		}
	}
	if w.writes > p*n/10 {
		t.Errorf("%d writes for %d lines: not buffered", w.writes, p*n)
	}
}

func TestStdoutSinkErrors(t *testing.T) {
	w := new(lineWriter)
	withStdout(t, w)
	j := connectortest.New(t, 1, connectortest.SinkNode("print", "stdout", nil))
	s := NewSink(j, 0, 0, format.EncodeJSON[any])
	s.Write("ok")
	if err := connectortest.Catch(func() { s.Write(make(chan int)) }); err == nil || !strings.HasPrefix(err.Error(), "sinks.print: encode record: json: unsupported type") {
		t.Errorf("encoding error: got %v", err)
	}
	s.PreCommit(nil, 0)
	if got := w.buf.String(); got != "\"ok\"\n" {
		t.Errorf("printed %q", got)
	}

	stdout = errWriter{}
	s.Write("x")
	if err := connectortest.Catch(s.End); err == nil || err.Error() != "sinks.print: write standard output: broken pipe" {
		t.Errorf("write error: got %v", err)
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }
