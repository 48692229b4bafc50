package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func sinkNode(name, connector string, options map[string]string) NodeConfig {
	return NodeConfig{Name: name, Kind: "sink", Section: "sinks", Connector: connector, Options: options}
}

func TestEncoders(t *testing.T) {
	type rec struct {
		Name string            `json:"name"`
		Tags map[string]string `json:"tags,omitempty"`
	}
	cases := []struct {
		name string
		enc  func(dst []byte) ([]byte, error)
		want string
	}{
		{"string", func(dst []byte) ([]byte, error) { return EncodeString(dst, "a b") }, "> a b"},
		{"stringer", func(dst []byte) ([]byte, error) { return EncodeStringer(dst, 1500*time.Millisecond) }, "> 1.5s"},
		{"json", func(dst []byte) ([]byte, error) { return EncodeJSON(dst, rec{Name: "<a & b>"}) }, `> {"name":"<a & b>"}`},
		{"json sorted keys", func(dst []byte) ([]byte, error) {
			return EncodeJSON(dst, rec{Name: "x", Tags: map[string]string{"b": "2", "a": "1"}})
		}, `> {"name":"x","tags":{"a":"1","b":"2"}}`},
		{"json string", func(dst []byte) ([]byte, error) { return EncodeJSON(dst, "line\nbreak") }, `> "line\nbreak"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.enc([]byte("> "))
			if err != nil || string(got) != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	if _, err := EncodeJSON(nil, math.NaN()); err == nil {
		t.Error("NaN encoded without error")
	}
	// The pooled encoder is fine after an error.
	if got, err := EncodeJSON(nil, 1); err != nil || string(got) != "1" {
		t.Errorf("after an error: got %q, %v", got, err)
	}
}

func TestFileSink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "nested")
	j := testJob(t, 2, sinkNode("out", "file", map[string]string{"path": dir}))
	j.Config.Checkpoint.Mode = NoCheckpoints // files are written in place
	long := strings.Repeat("x", 3*writeBufferSize)
	var want [2]strings.Builder
	for sub := range 2 {
		s := NewFileSink(j, 0, sub, EncodeJSON[map[string]any])
		for i := range 1000 * (sub + 1) {
			v := map[string]any{"sub": sub, "i": i, "html": "<&>"}
			if i == 500 {
				v["long"] = long
			}
			s.Write(v)
			line, _ := EncodeJSON(nil, v)
			want[sub].Write(line)
			want[sub].WriteByte('\n')
			if i == 10 {
				s.PreCommit(nil, 0)
				if got, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("part-%d-0", sub))); string(got) != want[sub].String() {
					t.Errorf("subtask %d: after a checkpoint the part file has %d bytes, want %d", sub, len(got), want[sub].Len())
				}
			}
		}
		s.End()
		s.End()
	}
	for sub := range 2 {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("part-%d-0", sub)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[sub].String() {
			t.Errorf("part-%d-0: got %d bytes, want %d", sub, len(got), want[sub].Len())
		}
		if !bytes.Contains(got, []byte(`"html":"<&>"`)) {
			t.Errorf("part-%d-0: HTML characters escaped", sub)
		}
	}

	// A subtask without records leaves no file.
	j = testJob(t, 3, sinkNode("out", "file", map[string]string{"path": dir}))
	NewFileSink(j, 0, 2, EncodeString).End()
	if _, err := os.Stat(filepath.Join(dir, "part-2-0")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty subtask wrote a file: %v", err)
	}
}

func TestFileSinkErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o666)
	j := testJob(t, 1, sinkNode("out", "file", map[string]string{"path": file}))
	if err := catch(func() { NewFileSink(j, 0, 0, EncodeString) }); err == nil || !strings.HasPrefix(err.Error(), "sinks.out: mkdir "+file) {
		t.Errorf("directory is a file: got %v", err)
	}

	j = testJob(t, 1, sinkNode("out", "file", map[string]string{"path": dir}))
	s := NewFileSink(j, 0, 0, EncodeJSON[float64])
	if err := catch(func() { s.Write(math.Inf(1)) }); err == nil || !strings.HasPrefix(err.Error(), "sinks.out: encode record: json: unsupported value") {
		t.Errorf("encoding error: got %v", err)
	}

	// A failed write names the file.
	s2 := NewFileSink(j, 0, 0, EncodeString)
	s2.Write("x")
	s2.cur.Close()
	if err := catch(s2.End); err == nil || !strings.Contains(err.Error(), "part-0-0") || !strings.HasPrefix(err.Error(), "sinks.out: ") {
		t.Errorf("write to a closed file: got %v", err)
	}
}

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
	j := testJob(t, p, sinkNode("print", "stdout", nil))
	var wg sync.WaitGroup
	for sub := range p {
		wg.Go(func() {
			s := NewStdoutSink(j, 0, sub, EncodeString)
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
	j := testJob(t, 1, sinkNode("print", "stdout", nil))
	s := NewStdoutSink(j, 0, 0, EncodeJSON[any])
	s.Write("ok")
	if err := catch(func() { s.Write(make(chan int)) }); err == nil || !strings.HasPrefix(err.Error(), "sinks.print: encode record: json: unsupported type") {
		t.Errorf("encoding error: got %v", err)
	}
	s.PreCommit(nil, 0)
	if got := w.buf.String(); got != "\"ok\"\n" {
		t.Errorf("printed %q", got)
	}

	stdout = errWriter{}
	s.Write("x")
	if err := catch(s.End); err == nil || err.Error() != "sinks.print: write standard output: broken pipe" {
		t.Errorf("write error: got %v", err)
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }
