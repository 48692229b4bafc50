package events

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestWriteRead(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, "wc")
	w.Emit(Event{Kind: Start})
	w.Emit(Event{Kind: Resume, Checkpoint: 7, Path: "ckpt/chk-000007"})
	w.Emit(Event{Kind: Checkpoint, Checkpoint: 8, Duration: 12 * time.Millisecond, Bytes: 4096})
	w.Emit(Event{Kind: Restart, Error: "counts[1]: panic: boom", Delay: time.Second, Attempt: 1})
	// A process killed in the middle of a line leaves it torn.
	buf.WriteString(`{"time":"2026-12-01T00:00:00Z","event":"chec`)
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []Kind{}
	for _, e := range got {
		kinds = append(kinds, e.Kind)
		if e.Job != "wc" || e.PID == 0 || e.Time.IsZero() {
			t.Errorf("event %+v lacks its job, process or time", e)
		}
	}
	if want := []Kind{Start, Resume, Checkpoint, Restart}; !equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	if got[1].Checkpoint != 7 || got[1].Path != "ckpt/chk-000007" || got[2].Duration != 12*time.Millisecond || got[3].Delay != time.Second || got[3].Error != "counts[1]: panic: boom" {
		t.Errorf("fields lost on the way: %+v", got)
	}
}

func equal(a, b []Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCreateAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	for range 2 {
		w, c, err := Create(path, "wc")
		if err != nil {
			t.Fatal(err)
		}
		w.Emit(Event{Kind: Start})
		c.Close()
	}
	got, err := ReadFile(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("ReadFile = %d events, %v; want the 2 of both processes", len(got), err)
	}
	if got, err := ReadFile(filepath.Join(t.TempDir(), "none")); err != nil || got != nil {
		t.Errorf("a missing file: %v, %v; want no events, no error", got, err)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

func TestWriterStopsAtFirstError(t *testing.T) {
	f := new(failingWriter)
	w := NewWriter(f, "wc")
	w.Emit(Event{Kind: Start})
	w.Emit(Event{Kind: Done})
	if f.n != 1 || w.Err() == nil || !strings.Contains(w.Err().Error(), "disk full") {
		t.Errorf("%d writes, Err %v; want one write and the error", f.n, w.Err())
	}
	var nilWriter *Writer
	nilWriter.Emit(Event{Kind: Start}) // drops it
	if nilWriter.Err() != nil {
		t.Error("a nil Writer has an error")
	}
}
