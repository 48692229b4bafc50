package file

import (
	"encoding/csv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// resumeSource reads, with a new file source of the given options, from
// source state st (subtask 0 of 1), as a run resuming from it does.
func resumeSource(t *testing.T, options map[string]string, st storage.SourceState) ([]string, error) {
	t.Helper()
	j := fileSourceJob(t, 1, options)
	j.SetFS(vfs.NewMem()) // the checkpoint; the source reads the OS
	j.Restore(t, &storage.Manifest{ID: 1, MaxParallelism: 128, Nodes: []storage.NodeState{
		{UID: "src", Parallelism: 1, Sources: []storage.SourceState{st}}}})
	return readFile(j, 0, format.LinesFormat())
}

// TestFileSourceRefusesChangedInput takes a position after two lines of a
// file, changes the file, and resumes from the position: a file whose
// read part is the same resumes (also grown, or changed after that part),
// any other is refused, naming the file and what changed.
func TestFileSourceRefusesChangedInput(t *testing.T) {
	const content = "l1\nl2\nl3\nl4\n"
	cases := []struct {
		name    string
		now     string
		want    []string // the records read after the position
		wantErr []string // or what the error says
	}{
		{"unchanged", content, []string{"l3", "l4"}, nil},
		{"appended", content + "l5\n", []string{"l3", "l4", "l5"}, nil},
		{"changed after the read part", "l1\nl2\nX3\nl4\n", []string{"X3", "l4"}, nil},
		{"rewritten with the same length", "L1\nl2\nl3\nl4\n", nil, []string{"its first 6 bytes, read before the checkpoint, are not the same", "then 12 bytes, modified ", "now 12 bytes, modified ", "run with --fresh"}},
		{"rewritten longer", "m1\nl2\nl3\nl4\nl5\n", nil, []string{"its first 6 bytes", "now 15 bytes"}},
		{"truncated", "l1\n", nil, []string{"it has fewer bytes than the 6 read before the checkpoint", "now 3 bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "in.txt"), content)
			options := map[string]string{"path": path}
			src := NewSource(fileSourceJob(t, 1, options), 0, 0, format.LinesFormat())
			for range 2 {
				src.Next()
			}
			st := src.lr.saved()
			src.lr.closeFile()
			// A later modification time, as a real rewrite has.
			writeFile(t, path, c.now)
			later := time.Now().Add(time.Second)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
			got, err := resumeSource(t, options, st)
			if c.wantErr == nil {
				if err != nil || !slices.Equal(got, c.want) {
					t.Errorf("resumed: %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("resumed and read %q, want an error", got)
			}
			for _, w := range append([]string{"sources.src[0]: " + path + " changed since the checkpoint: "}, c.wantErr...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not say %q", err, w)
				}
			}
		})
	}
}

// TestFileSourceChecksumGoesOn checks that a source resumed from a
// position keeps the checksum of what it read: a position it takes later
// resumes in turn.
func TestFileSourceChecksumGoesOn(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "in.txt"), "a\nb\nc\nd\n")
	options := map[string]string{"path": path}
	src := NewSource(fileSourceJob(t, 1, options), 0, 0, format.LinesFormat())
	src.Next()
	first := src.lr.saved()
	j := fileSourceJob(t, 1, options)
	j.SetFS(vfs.NewMem())
	j.Restore(t, &storage.Manifest{ID: 1, MaxParallelism: 128, Nodes: []storage.NodeState{
		{UID: "src", Parallelism: 1, Sources: []storage.SourceState{first}}}})
	resumed := NewSource(j, 0, 0, format.LinesFormat())
	resumed.Next()
	resumed.Next()
	if got, want := resumed.Position().CRC, crcOf("a\nb\nc\n"); got != want {
		t.Errorf("checksum after resuming and reading on: %08x, want %08x", got, want)
	}
	if got, err := resumeSource(t, options, resumed.lr.saved()); err != nil || !slices.Equal(got, []string{"d"}) {
		t.Errorf("resumed again: %q, %v; want [d]", got, err)
	}
}

// TestFileSourceChecksum reads a file of several read buffers, with lines
// of every length, one longer than the buffer, and a last line without a
// line break, and checks every 37 records (so that lines read between two
// looks add up) that the position's checksum is that of the bytes before
// its offset.
func TestFileSourceChecksum(t *testing.T) {
	var b strings.Builder
	r := rand.New(rand.NewPCG(3, 4))
	for b.Len() < 3*readBufferSize {
		if b.Len() > readBufferSize && b.Len() < readBufferSize+100 {
			b.WriteString(longLine + "\r\n")
		}
		b.WriteString(strings.Repeat("x", r.IntN(300)) + "\n")
	}
	b.WriteString("last")
	content := b.String()
	path := writeFile(t, filepath.Join(t.TempDir(), "in.txt"), content)
	src := NewSource(fileSourceJob(t, 1, map[string]string{"path": path}), 0, 0, format.LinesFormat())
	n := 0
	for {
		if n%37 == 0 {
			p := src.Position()
			if want := crcOf(content[:p.Offset]); p.File == 0 && p.CRC != want {
				t.Fatalf("before record %d (offset %d): checksum %08x, want %08x", n, p.Offset, p.CRC, want)
			}
		}
		if _, ok := src.Next(); !ok {
			break
		}
		n++
	}
	if n < 1000 {
		t.Errorf("read %d records", n)
	}
}

// TestCSVRecordsSpanLines writes records with encoding/csv's Writer whose
// fields hold line breaks (\n and \r\n), quotes and delimiters, over
// several read buffers and with a field longer than one, reads them with
// the file source, and compares with encoding/csv's Reader; then resumes
// from the position after every 4999th record (the offset and checksum
// after a record of several lines) and checks that the rest follows.
func TestCSVRecordsSpanLines(t *testing.T) {
	type row struct{ A, B string }
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"x", "yz", ",", "\"", "\n", "\r\n", " ", "é", "\"\"", ""}
	cell := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	var text strings.Builder
	w := csv.NewWriter(&text)
	w.UseCRLF = r.IntN(2) == 0
	w.Write([]string{"a", "b"})
	for text.Len() < 3*readBufferSize {
		rec := []string{cell(), cell()}
		if text.Len() > readBufferSize && text.Len() < readBufferSize+1000 {
			rec[0] = strings.Repeat("long\n", readBufferSize/4)
		}
		w.Write(rec)
	}
	w.Flush()
	content := text.String()
	recs, err := csv.NewReader(strings.NewReader(content)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var want []row
	for _, rec := range recs[1:] {
		want = append(want, row{rec[0], rec[1]})
	}
	path := writeFile(t, filepath.Join(t.TempDir(), "in.csv"), content)
	options := map[string]string{"path": path}
	csvRows, err := format.CSVFormat[row](',', true)
	if err != nil {
		t.Fatal(err)
	}
	src := NewSource(fileSourceJob(t, 1, options), 0, 0, csvRows)
	const every = 4999
	var got []row
	var positions []storage.SourceState
	for {
		if len(got)%every == 0 {
			positions = append(positions, src.lr.saved())
		}
		rec, ok := src.Next()
		if !ok {
			break
		}
		got = append(got, rec)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read %d records, encoding/csv %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	for i, p := range positions {
		j := fileSourceJob(t, 1, options)
		j.SetFS(vfs.NewMem())
		j.Restore(t, &storage.Manifest{ID: 1, MaxParallelism: 128, Nodes: []storage.NodeState{
			{UID: "src", Parallelism: 1, Sources: []storage.SourceState{p}}}})
		rest, err := readFile(j, 0, csvRows)
		if err != nil {
			t.Fatalf("resumed after record %d: %v", i*every, err)
		}
		if !slices.Equal(rest, want[i*every:]) {
			t.Fatalf("resumed after record %d: %d records, want %d; first difference at %d", i*every, len(rest), len(want)-i*every, firstDiff(rest, want[i*every:]))
		}
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
