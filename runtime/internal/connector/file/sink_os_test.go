package file

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
)

func TestFileSink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "nested")
	j := connectortest.New(t, 2, connectortest.SinkNode("out", "file", map[string]string{"path": dir}))
	j.Config.Checkpoint.Mode = config.NoCheckpoints // files are written in place
	long := strings.Repeat("x", 3*writeBufferSize)
	var want [2]strings.Builder
	for sub := range 2 {
		s := NewSink(j, 0, sub, format.EncodeJSON[map[string]any])
		for i := range 1000 * (sub + 1) {
			v := map[string]any{"sub": sub, "i": i, "html": "<&>"}
			if i == 500 {
				v["long"] = long
			}
			s.Write(v)
			line, _ := format.EncodeJSON(nil, v)
			want[sub].Write(line)
			want[sub].WriteByte('\n')
			if i == 10 {
				s.PreCommit(nil, 0)
				if got, _ := os.ReadFile(filepath.Join(dir, partName(sub, 0))); string(got) != want[sub].String() {
					t.Errorf("subtask %d: after a checkpoint the part file has %d bytes, want %d", sub, len(got), want[sub].Len())
				}
			}
		}
		s.End()
		s.End()
	}
	for sub := range 2 {
		got, err := os.ReadFile(filepath.Join(dir, partName(sub, 0)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[sub].String() {
			t.Errorf("%s: got %d bytes, want %d", partName(sub, 0), len(got), want[sub].Len())
		}
		if !bytes.Contains(got, []byte(`"html":"<&>"`)) {
			t.Errorf("%s: HTML characters escaped", partName(sub, 0))
		}
	}

	// A subtask without records leaves no file.
	j = connectortest.New(t, 3, connectortest.SinkNode("out", "file", map[string]string{"path": dir}))
	NewSink(j, 0, 2, format.EncodeString).End()
	if _, err := os.Stat(filepath.Join(dir, partName(2, 0))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty subtask wrote a file: %v", err)
	}
}

func TestFileSinkErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o666)
	j := connectortest.New(t, 1, connectortest.SinkNode("out", "file", map[string]string{"path": file}))
	if err := connectortest.Catch(func() { NewSink(j, 0, 0, format.EncodeString) }); err == nil || !strings.HasPrefix(err.Error(), "sinks.out: mkdir "+file) {
		t.Errorf("directory is a file: got %v", err)
	}

	j = connectortest.New(t, 1, connectortest.SinkNode("out", "file", map[string]string{"path": dir}))
	s := NewSink(j, 0, 0, format.EncodeJSON[float64])
	if err := connectortest.Catch(func() { s.Write(math.Inf(1)) }); err == nil || !strings.HasPrefix(err.Error(), "sinks.out: encode record: json: unsupported value") {
		t.Errorf("encoding error: got %v", err)
	}

	// A failed write names the file.
	s2 := NewSink(j, 0, 0, format.EncodeString)
	s2.Write("x")
	s2.pw.cur.Close()
	if err := connectortest.Catch(s2.End); err == nil || !strings.Contains(err.Error(), partName(0, 0)) || !strings.HasPrefix(err.Error(), "sinks.out: ") {
		t.Errorf("write to a closed file: got %v", err)
	}
}
