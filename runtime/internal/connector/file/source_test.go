package file

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/fault"
)

func fileSourceJob(t testing.TB, p int, options map[string]string) *connectortest.Env {
	return connectortest.New(t, p, connectortest.SourceNode("src", "file", options))
}

// readFile reads all records of subtask sub of a file source.
func readFile[T any](j *connectortest.Env, sub int, format format.Format[T]) (recs []T, err error) {
	err = connectortest.Catch(func() { recs = connectortest.ReadAll[T](NewSource(j, 0, sub, format)) })
	return recs, err
}

func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// longLine is longer than the read buffer, to go through the assembling of
// a line from several reads.
var longLine = strings.Repeat("0123456789", readBufferSize/10*2+7)

func TestLinesFormat(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    []string
	}{
		{"lines", "a\nb b\nc\n", []string{"a", "b b", "c"}},
		{"crlf", "a\r\nb\r\n\r\nc\r\n", []string{"a", "b", "", "c"}},
		{"no final line break", "a\nb", []string{"a", "b"}},
		{"no final line break crlf", "a\r\nb\r", []string{"a", "b"}},
		{"empty file", "", nil},
		{"empty lines", "\n\n", []string{"", ""}},
		{"carriage return inside", "a\rb\n", []string{"a\rb"}},
		{"bom", "\uFEFFa\n\uFEFFb\n", []string{"a", "\uFEFFb"}},
		{"long line", "a\n" + longLine + "\nb\n", []string{"a", longLine, "b"}},
		{"long last line", "a\n" + longLine, []string{"a", longLine}},
		{"long crlf line", longLine + "\r\n", []string{longLine}},
		{"buffer-sized line", strings.Repeat("x", readBufferSize-1) + "\n" + strings.Repeat("y", readBufferSize) + "\n", []string{strings.Repeat("x", readBufferSize-1), strings.Repeat("y", readBufferSize)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "in.txt"), c.content)
			got, err := readFile(fileSourceJob(t, 1, map[string]string{"path": path}), 0, format.LinesFormat())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %d lines %.80q, want %d lines %.80q", len(got), got, len(c.want), c.want)
			}
		})
	}
}

type jsonRec struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func TestJSONFormat(t *testing.T) {
	long := strings.Repeat("é", readBufferSize)
	cases := []struct {
		name     string
		content  string
		want     []jsonRec
		err      string // with on-error=fail
		skipped  int    // with on-error=skip
		firstBad string
	}{
		{name: "records", content: `{"name":"a","n":1}` + "\n" + `{"name":"b","n":2}` + "\n", want: []jsonRec{{"a", 1}, {"b", 2}}},
		{name: "missing fields are zero", content: `{"name":"a","n":1}` + "\n" + `{"name":"b"}` + "\n" + `{"n":3}`, want: []jsonRec{{"a", 1}, {"b", 0}, {"", 3}}},
		{name: "empty lines", content: "\n" + `{"n":1}` + "\n  \n\t\n\n" + `{"n":2}` + "\n\n", want: []jsonRec{{N: 1}, {N: 2}}},
		{name: "crlf", content: `{"n":1}` + "\r\n" + `{"n":2}` + "\r\n", want: []jsonRec{{N: 1}, {N: 2}}},
		{name: "no final line break", content: `{"n":1}` + "\n" + `{"n":2}`, want: []jsonRec{{N: 1}, {N: 2}}},
		{name: "empty file", content: "", want: nil},
		{name: "bom", content: "\uFEFF" + `{"n":1}` + "\n", want: []jsonRec{{N: 1}}},
		{name: "long line", content: `{"n":1}` + "\n" + `{"name":"` + long + `","n":2}` + "\n" + `{"n":3}`, want: []jsonRec{{N: 1}, {long, 2}, {N: 3}}},
		{
			name:    "syntax error",
			content: `{"n":1}` + "\n" + `{"n":` + "\n" + `{"n":3}` + "\n",
			want:    []jsonRec{{N: 1}, {N: 3}},
			err:     "sources.src: IN:2: bad JSON: unexpected end of JSON input", skipped: 1, firstBad: "IN:2: bad JSON: unexpected end of JSON input",
		},
		{
			name:    "wrong type",
			content: "\n\n" + `{"n":"x"}` + "\n" + `{"n":2}` + "\n" + `{"n":1.5}`,
			want:    []jsonRec{{N: 2}},
			err:     "sources.src: IN:3: bad JSON: cannot unmarshal string into Go struct field jsonRec.n of type int", skipped: 2, firstBad: "IN:3: bad JSON: cannot unmarshal",
		},
		{
			name:    "two values on a line",
			content: `{"n":1}{"n":2}` + "\n",
			want:    nil,
			err:     "sources.src: IN:1: bad JSON: invalid character '{' after top-level value", skipped: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "in.jsonl"), c.content)
			j := fileSourceJob(t, 1, map[string]string{"path": path, "on-error": "fail"})
			got, err := readFile(j, 0, format.JSONFormat[jsonRec]())
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("got %.80v, want %.80v", got, c.want)
				}
				return
			}
			if want := strings.ReplaceAll(c.err, "IN", path); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("on-error=fail: got error %v, want %s", err, want)
			}

			j = fileSourceJob(t, 1, map[string]string{"path": path, "on-error": "skip"})
			got, err = readFile(j, 0, format.JSONFormat[jsonRec]())
			if err != nil {
				t.Fatalf("on-error=skip: %v", err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("on-error=skip: got %v, want %v", got, c.want)
			}
			wantLog := fmt.Sprintf("test: sources.src[0]: skipped %d malformed records (first: %s", c.skipped, strings.ReplaceAll(c.firstBad, "IN", path))
			if log := j.Log(); !strings.HasPrefix(log, wantLog) || strings.Count(log, "\n") != 1 {
				t.Errorf("on-error=skip: log %q, want one line starting %q", log, wantLog)
			}
		})
	}
}

type (
	side  string
	stamp time.Time
)

type trade struct {
	Sym    string
	Price  float64 `csv:"px"`
	Qty    int32
	At     stamp
	Hold   time.Duration
	OK     bool
	Side   side
	Lot    uint8
	Weight float32
	Ignore chan int `csv:"-"`
	secret int
}

func mustTime(t *testing.T, s string) stamp {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return stamp(at)
}

func TestCSVFormat(t *testing.T) {
	at := mustTime(t, "2024-03-01T12:30:00Z")
	cases := []struct {
		name      string
		delimiter rune
		header    bool
		content   string
		want      []trade
		err       string // with on-error=fail
		skipped   int    // with on-error=skip; 0 when the error is fatal anyway
	}{
		{
			name: "header", delimiter: ',', header: true,
			content: "sym,px,qty,at,hold,ok,side,lot,weight\nA,1.5,3,2024-03-01T12:30:00Z,1m30s,true,buy,7,0.25\n",
			want:    []trade{{Sym: "A", Price: 1.5, Qty: 3, At: at, Hold: 90e9, OK: true, Side: "buy", Lot: 7, Weight: 0.25}},
		},
		{
			name: "header columns in any order and case, some missing", delimiter: ',', header: true,
			content: "QTY,Sym,PX\n3,A,1.5\n-4,B,2\n",
			want:    []trade{{Sym: "A", Price: 1.5, Qty: 3}, {Sym: "B", Price: 2, Qty: -4}},
		},
		{
			name: "quotes", delimiter: ',', header: true,
			content: "sym,side,px\n\"a,b\",\"say \"\"hi\"\"\",1\n\"\",\"\"\"\",\"2\"\n",
			want:    []trade{{Sym: "a,b", Side: `say "hi"`, Price: 1}, {Sym: "", Side: `"`, Price: 2}},
		},
		{
			name: "empty cells are zero", delimiter: ',', header: true,
			content: "sym,px,qty,at,hold,ok,lot,weight\n,,,,,,,\n",
			want:    []trade{{}},
		},
		{
			name: "no header", delimiter: ',', header: false,
			content: "A,1.5,3,2024-03-01T12:30:00Z,2s,false,sell,255,1e3\n",
			want:    []trade{{Sym: "A", Price: 1.5, Qty: 3, At: at, Hold: 2e9, Side: "sell", Lot: 255, Weight: 1000}},
		},
		{
			name: "semicolon", delimiter: ';', header: true,
			content: "sym;px\n\"x;y\";2,5\n",
			err:     `sources.src: IN:2: bad CSV: column px: "2,5" is not a valid float64`, skipped: 1,
		},
		{
			name: "multibyte delimiter", delimiter: '§', header: true,
			content: "sym§px\n\"a§\"§2\nb§3\n",
			want:    []trade{{Sym: "a§", Price: 2}, {Sym: "b", Price: 3}},
		},
		{
			name: "tab, crlf, no final line break", delimiter: '\t', header: true,
			content: "sym\tpx\r\nA\t1\r\n\r\nB\t2",
			want:    []trade{{Sym: "A", Price: 1}, {Sym: "B", Price: 2}},
		},
		{
			name: "empty file", delimiter: ',', header: true,
			content: "",
		},
		{
			name: "header only", delimiter: ',', header: true,
			content: "sym,px\n",
		},
		{
			name: "empty lines before the header, bom", delimiter: ',', header: true,
			content: "\uFEFF\n\nsym,px\nA,1\n",
			want:    []trade{{Sym: "A", Price: 1}},
		},
		{
			name: "long line", delimiter: ',', header: true,
			content: "sym,px\n\"" + longLine + "\",1\nB,2",
			want:    []trade{{Sym: longLine, Price: 1}, {Sym: "B", Price: 2}},
		},
		{
			name: "unknown column", delimiter: ',', header: true,
			content: "sym,price\nA,1\n",
			err:     `sources.src: IN:1: csv header: unknown column "price": trade has columns Sym, px, Qty, At, Hold, OK, Side, Lot, Weight`,
		},
		{
			name: "column twice", delimiter: ',', header: true,
			content: "sym,PX,Sym\nA,1,B\n",
			err:     `sources.src: IN:1: csv header: columns "sym" and "Sym" both name field trade.Sym`,
		},
		{
			name: "wrong number of fields", delimiter: ',', header: true,
			content: "sym,px\nA,1\nB\nC,3,4\nD,4\n",
			want:    []trade{{Sym: "A", Price: 1}, {Sym: "D", Price: 4}},
			err:     "sources.src: IN:3: bad CSV: 1 fields, want 2", skipped: 2,
		},
		{
			name: "bad values", delimiter: ',', header: true,
			content: "sym,qty,lot,ok,at,hold\nA,1.5,,,,\nB,,256,,,\nC,,,yes,,\nD,,,,yesterday,\nE,,,,,5 minutes\nF,,,,,\n",
			want:    []trade{{Sym: "F"}},
			err:     `sources.src: IN:2: bad CSV: column qty: "1.5" is not a valid int32`, skipped: 5,
		},
		{
			// Lines 2 and 3 are one record, as encoding/csv reads them:
			// the quoted field of line 2 goes on past its line break.
			name: "quote errors", delimiter: ',', header: true,
			content: "sym,px\n\"A,1\na\"b,1\n\"a\"b,1\nB,2\n",
			want:    []trade{{Sym: "B", Price: 2}},
			err:     "sources.src: IN:2: bad CSV: 'b' after the closing quote of field 1: want the delimiter \",\"", skipped: 2,
		},
		{
			name: "quoted line breaks", delimiter: ',', header: true,
			content: "sym,px\n\"a\nb\",1\n\"c\r\nd\"\"\n\"\"e\",2\n\"\",3\nx\"y,\"4\n\"\n",
			want:    []trade{{Sym: "a\nb", Price: 1}, {Sym: "c\nd\"\n\"e", Price: 2}, {Sym: "", Price: 3}},
			// The bare quote of x"y opens no field; "4 does, and line 9
			// closes it: lines 8 and 9 are one malformed record, counted
			// from its first line.
			err: "sources.src: IN:8: bad CSV: bare \" in unquoted field", skipped: 1,
		},
		{
			name: "quoted field open at the end of the file", delimiter: ',', header: true,
			content: "sym,px\n\"a\nb\",1\n\"B,2\nC,3\n",
			want:    []trade{{Sym: "a\nb", Price: 1}},
			err:     "sources.src: IN:4: bad CSV: quoted field not closed before the end of the record", skipped: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "in.csv"), c.content)
			format, err := format.CSVFormat[trade](c.delimiter, c.header)
			if err != nil {
				t.Fatal(err)
			}
			j := fileSourceJob(t, 1, map[string]string{"path": path, "on-error": "fail"})
			got, err := readFile(j, 0, format)
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("got %.200v, want %.200v", got, c.want)
				}
				return
			}
			// A malformed record is fatal, so that the job is not
			// restarted to fail on it again.
			var fatal *fault.Fatal
			if want := strings.ReplaceAll(c.err, "IN", path); err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &fatal) {
				t.Errorf("on-error=fail: got error\n\t%v\nwant a fatal one that starts with\n\t%s", err, want)
			}
			j = fileSourceJob(t, 1, map[string]string{"path": path, "on-error": "skip"})
			got, err = readFile(j, 0, format)
			if c.skipped == 0 {
				if err == nil {
					t.Errorf("on-error=skip: no error, want %s", c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("on-error=skip: %v", err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("on-error=skip: got %v, want %v", got, c.want)
			}
			if want := fmt.Sprintf("skipped %d malformed records", c.skipped); !strings.Contains(j.Log(), want) {
				t.Errorf("on-error=skip: log %q, want %q", j.Log(), want)
			}
		})
	}
}

func TestCSVFormatErrors(t *testing.T) {
	type unexported struct{ a int }
	type nested struct {
		A string
		B struct{ X int }
	}
	type pointer struct{ P *int }
	cases := []struct {
		name string
		make func() error
		want string
	}{
		{"not a struct", func() error { _, err := format.CSVFormat[string](',', true); return err }, "csv needs a struct record type, got string"},
		{"no exported field", func() error { _, err := format.CSVFormat[unexported](',', true); return err }, "csv record type file.unexported has no exported field"},
		{"struct field", func() error { _, err := format.CSVFormat[nested](',', true); return err }, "csv cannot read field nested.B of type struct { X int }: use string, bool, a number, time.Time or time.Duration, or tag it `csv:\"-\"`"},
		{"pointer field", func() error { _, err := format.CSVFormat[pointer](',', true); return err }, "csv cannot read field pointer.P of type *int"},
		{"quote delimiter", func() error { _, err := format.CSVFormat[trade]('"', true); return err }, "csv delimiter '\"' cannot be a quote or a line break"},
		{"newline delimiter", func() error { _, err := format.CSVFormat[trade]('\n', true); return err }, "csv delimiter '\\n' cannot be a quote or a line break"},
		{"invalid delimiter", func() error { _, err := format.CSVFormat[trade](-1, true); return err }, "is not a valid character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.make(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %s", err, c.want)
			}
		})
	}
}

func TestCSVFormatFor(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "in.csv"), "A;1\n")
	j := fileSourceJob(t, 1, map[string]string{"path": path, "header": "false", "delimiter": ";"})
	got, err := readFile(j, 0, format.CSVFormatFor[struct {
		S string
		N int
	}](j.Node(0)))
	if err != nil || len(got) != 1 || got[0].S != "A" || got[0].N != 1 {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []map[string]string{{"delimiter": ";;"}, {"header": "maybe"}} {
		bad["path"] = path
		j := fileSourceJob(t, 1, bad)
		err := connectortest.Catch(func() { format.CSVFormatFor[trade](j.Node(0)) })
		if err == nil || !strings.HasPrefix(err.Error(), "sources.src: ") {
			t.Errorf("options %v: got error %v", bad, err)
		}
	}
}

func TestFileSourceSplitsFiles(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 10 {
		var b strings.Builder
		for l := range i * 3 { // file 0 is empty
			line := fmt.Sprintf("f%d-l%d", i, l)
			want = append(want, line)
			fmt.Fprintln(&b, line)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("in-%02d.txt", i)), b.String())
	}
	// Not read: hidden files, files in subdirectories.
	writeFile(t, filepath.Join(dir, ".hidden"), "no\n")
	writeFile(t, filepath.Join(dir, "_SUCCESS"), "no\n")
	writeFile(t, filepath.Join(dir, "sub", "in.txt"), "no\n")
	if err := os.Symlink(filepath.Join(dir, "in-01.txt"), filepath.Join(dir, "zz-link.txt")); err != nil {
		t.Fatal(err)
	}
	want = append(want, "f1-l0", "f1-l1", "f1-l2") // through the link

	for _, path := range []string{dir, filepath.Join(dir, "*.txt")} {
		const p = 3
		j := fileSourceJob(t, p, map[string]string{"path": path})
		var got []string
		for sub := range p {
			recs, err := readFile(j, sub, format.LinesFormat())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				var f int
				fmt.Sscanf(r, "f%d-", &f)
				if r != "f1-l0" && r != "f1-l1" && r != "f1-l2" && f%p != sub {
					t.Errorf("%s: subtask %d read %s", path, sub, r)
				}
			}
			got = append(got, recs...)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: read %v, want %v", path, got, want)
		}
		if n := j.Ckpt().RecordsRead(); n != int64(len(want)) {
			t.Errorf("%s: progress counted %d records, want %d", path, n, len(want))
		}
	}
}

func TestFileSourceMoreSubtasksThanFiles(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "in.txt"), "a\nb\n")
	j := fileSourceJob(t, 3, map[string]string{"path": path})
	for sub, want := range []int{2, 0, 0} {
		got, err := readFile(j, sub, format.LinesFormat())
		if err != nil || len(got) != want {
			t.Errorf("subtask %d: read %v, %v; want %d lines", sub, got, err, want)
		}
	}
}

func TestFileSourceErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".hidden"), "x\n")
	cases := []struct {
		name    string
		options map[string]string
		want    string
	}{
		{"missing file", map[string]string{"path": filepath.Join(dir, "nope.txt")}, fmt.Sprintf("sources.src: path %q matches no file", filepath.Join(dir, "nope.txt"))},
		{"empty glob", map[string]string{"path": filepath.Join(dir, "*.csv")}, "matches no file"},
		{"only hidden files", map[string]string{"path": dir}, "matches no file"},
		{"bad pattern", map[string]string{"path": filepath.Join(dir, "[")}, "syntax error in pattern"},
		{"bad on-error", map[string]string{"path": dir, "on-error": "ignore"}, `sources.src: on-error wants fail, skip or dead-letter, got "ignore"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := fileSourceJob(t, 1, c.options)
			err := connectortest.Catch(func() { NewSource(j, 0, 0, format.LinesFormat()) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %s", err, c.want)
			}
		})
	}

	// A file that disappears after the listing fails when it is read.
	path := writeFile(t, filepath.Join(dir, "gone.txt"), "x\n")
	j := fileSourceJob(t, 1, map[string]string{"path": path})
	src := NewSource(j, 0, 0, format.LinesFormat())
	os.Remove(path)
	if err := connectortest.Catch(func() { src.Next() }); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("removed file: got %v", err)
	}
}

// TestFileSourceMissingRelative checks that a relative path that matches
// nothing is reported with the folder it was resolved against: the
// working directory, which need not be the pipeline file's.
func TestFileSourceMissingRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	j := fileSourceJob(t, 1, map[string]string{"path": filepath.Join("data", "*.csv")})
	err = connectortest.Catch(func() { NewSource(j, 0, 0, format.LinesFormat()) })
	want := fmt.Sprintf("sources.src: path %q (resolved against the working directory %s) matches no file", filepath.Join("data", "*.csv"), wd)
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestFileSourceStopsWhenJobFails(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "in.txt"), strings.Repeat("x\n", 10*connector.CountEvery))
	j := fileSourceJob(t, 1, map[string]string{"path": path})
	src := NewSource(j, 0, 0, format.LinesFormat())
	j.Cancel(fmt.Errorf("elsewhere"))
	n := 0
	err := connectortest.Catch(func() {
		for {
			if _, ok := src.Next(); !ok {
				break
			}
			n++
		}
	})
	if err != fault.ErrCanceled || n >= 2*connector.CountEvery {
		t.Errorf("read %d records and got %v, want to stop within %d records with %v", n, err, connector.CountEvery, fault.ErrCanceled)
	}
}

// TestFileSourceSeek reads n records, takes the position, and checks that a
// new source seeking to it reads exactly the rest, for every n.
func TestFileSourceSeek(t *testing.T) {
	dir := t.TempDir()
	long := `"` + strings.Repeat("z", readBufferSize+10) + `"`
	t.Run("lines", func(t *testing.T) {
		writeFile(t, filepath.Join(dir, "lines", "a.txt"), "a1\n\r\na3\r\n"+longLine+"\na5")
		writeFile(t, filepath.Join(dir, "lines", "b.txt"), "")
		writeFile(t, filepath.Join(dir, "lines", "c.txt"), "\uFEFFc1\nc2\n")
		testSeek(t, filepath.Join(dir, "lines"), "fail", format.LinesFormat())
	})
	t.Run("jsonl", func(t *testing.T) {
		writeFile(t, filepath.Join(dir, "jsonl", "a.jsonl"), `{"n":1}`+"\n\n"+`{"n":2}`+"\n"+`{"name":`+long+"}\n")
		writeFile(t, filepath.Join(dir, "jsonl", "b.jsonl"), "bad\n"+`{"n":3}`+"\r\n"+"\n")
		writeFile(t, filepath.Join(dir, "jsonl", "c.jsonl"), `{"n":4}`)
		testSeek(t, filepath.Join(dir, "jsonl"), "skip", format.JSONFormat[jsonRec]())
	})
	t.Run("csv", func(t *testing.T) {
		writeFile(t, filepath.Join(dir, "csv", "a.csv"), "\uFEFF\npx,sym\n1,a\n2,b\n\n3,\"c\nbad\n")
		writeFile(t, filepath.Join(dir, "csv", "b.csv"), "sym,qty\nd,4\ne,5\n"+strings.Trim(long, `"`)+",6")
		writeFile(t, filepath.Join(dir, "csv", "c.csv"), "sym\n")
		writeFile(t, filepath.Join(dir, "csv", "d.csv"), "SYM\nf")
		format, err := format.CSVFormat[trade](',', true)
		if err != nil {
			t.Fatal(err)
		}
		testSeek(t, filepath.Join(dir, "csv"), "skip", format)
	})
}

func testSeek[T comparable](t *testing.T, path, onError string, format format.Format[T]) {
	options := map[string]string{"path": path, "on-error": onError}
	j := fileSourceJob(t, 1, options)
	all, err := readFile(j, 0, format)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 5 {
		t.Fatalf("only %d records", len(all))
	}
	for n := 0; n <= len(all); n++ {
		var pos Position
		var rest []T
		err := connectortest.Catch(func() {
			src := NewSource(fileSourceJob(t, 1, options), 0, 0, format)
			for range n {
				if _, ok := src.Next(); !ok {
					t.Fatalf("ended before record %d", n)
				}
			}
			pos = src.Position()
			src2 := NewSource(fileSourceJob(t, 1, options), 0, 0, format)
			if err := src2.Seek(pos); err != nil {
				t.Fatalf("seek to %+v: %v", pos, err)
			}
			rest = connectortest.ReadAll[T](src2)
		})
		if err != nil {
			t.Fatalf("after %d records: %v", n, err)
		}
		if !slices.Equal(rest, all[n:]) {
			t.Errorf("seek to %+v after %d records: read %.100v, want %.100v", pos, n, rest, all[n:])
		}
	}
}

func TestFileSourcePosition(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, filepath.Join(dir, "a.txt"), "a1\r\na2\n")
	b := writeFile(t, filepath.Join(dir, "b.txt"), "b1\n")
	c := writeFile(t, filepath.Join(dir, "c.txt"), "c1\nc2\n")
	j := fileSourceJob(t, 2, map[string]string{"path": dir})
	src := NewSource(j, 0, 0, format.LinesFormat()) // reads a and c
	// CRC is the checksum of what was read of the file.
	crc := crcOf
	want := []Position{
		{File: 0, Name: a, Offset: 0, Line: 1},
		{File: 0, Name: a, Offset: 4, Line: 2, CRC: crc("a1\r\n")},
		{File: 0, Name: a, Offset: 7, Line: 3, CRC: crc("a1\r\na2\n")},
		{File: 2, Name: c, Offset: 3, Line: 2, CRC: crc("c1\n")},
		{File: 2, Name: c, Offset: 6, Line: 3, CRC: crc("c1\nc2\n")},
		{File: 3, Line: 1},
	}
	for i, w := range want {
		if got := src.Position(); got != w {
			t.Errorf("before record %d: position %+v, want %+v", i, got, w)
		}
		src.Next()
	}
	if !src.Done() {
		t.Error("not done")
	}

	// Line numbers go on from the position: the error names the line.
	writeFile(t, a, "1\n2\n3\nx\n")
	j = fileSourceJob(t, 2, map[string]string{"path": dir})
	ints := NewSource(j, 0, 0, format.JSONFormat[int]())
	if err := ints.Seek(Position{File: 0, Name: a, Offset: 4, Line: 3}); err != nil {
		t.Fatal(err)
	}
	if err := connectortest.Catch(func() { connectortest.ReadAll[int](ints) }); err == nil || !strings.Contains(err.Error(), a+":4: bad JSON") {
		t.Errorf("got %v, want the error on line 4", err)
	}

	// Positions that do not fit the files.
	for _, p := range []Position{
		{File: 1, Name: b, Offset: 0, Line: 1},  // subtask 1's file
		{File: 2, Name: b, Offset: 0, Line: 1},  // other name
		{File: 0, Name: a, Offset: 99, Line: 1}, // past the end
		{File: 0, Name: a, Offset: -1, Line: 1},
	} {
		src := NewSource(j, 0, 0, format.LinesFormat())
		if err := src.Seek(p); err == nil {
			t.Errorf("seek to %+v: no error", p)
		}
	}
	// Seeking past the last file: done at once.
	src = NewSource(j, 0, 0, format.LinesFormat())
	if err := src.Seek(Position{File: 3}); err != nil {
		t.Fatal(err)
	}
	if _, ok := src.Next(); ok || !src.Done() {
		t.Error("source seeked past its files is not done")
	}
}

// wordsFile writes a text file of about size bytes, made of words.
func wordsFile(tb testing.TB, path string, size int) {
	words := strings.Fields("the quick brown fox jumps over the lazy dog stream pipeline barrier checkpoint operator state key group watermark source sink record batch")
	r := rand.New(rand.NewPCG(1, 2))
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for n := 0; n < size; {
		k := 1 + r.IntN(15)
		for i := range k {
			if i > 0 {
				w.WriteByte(' ')
				n++
			}
			s := words[r.IntN(len(words))]
			w.WriteString(s)
			n += len(s)
		}
		w.WriteByte('\n')
		n++
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkFileSourceLines compares reading lines through FileSource with
// a hand-written bufio.Scanner loop, alone and with a word count.
func BenchmarkFileSourceLines(b *testing.B) {
	path := filepath.Join(b.TempDir(), "words.txt")
	wordsFile(b, path, 50<<20)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size := fi.Size()

	source := func(b *testing.B, use func(string)) {
		b.SetBytes(size)
		for b.Loop() {
			j := fileSourceJob(b, 1, map[string]string{"path": path})
			src := NewSource(j, 0, 0, format.LinesFormat())
			ctl := src.Ctl()
			for {
				if rec, ok := src.Next(); ok {
					use(rec)
				} else if src.Done() {
					break
				}
				if id := ctl.Poll(); id != 0 {
					b.Fatal("barrier")
				}
			}
		}
	}
	scanner := func(b *testing.B, use func(string)) {
		b.SetBytes(size)
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				use(sc.Text())
			}
			if err := sc.Err(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	}
	var lines int
	count := func(string) { lines++ }
	counts := map[string]int{}
	wordcount := func(line string) {
		for _, w := range strings.Fields(line) {
			counts[w]++
		}
	}
	b.Run("FileSource", func(b *testing.B) { source(b, count) })
	b.Run("Scanner", func(b *testing.B) { scanner(b, count) })
	b.Run("FileSource+wordcount", func(b *testing.B) { source(b, wordcount) })
	b.Run("Scanner+wordcount", func(b *testing.B) { scanner(b, wordcount) })
}

// crcOf is the checksum a source keeps of what it read.
func crcOf(read string) uint32 { return crc32.Checksum([]byte(read), castagnoli) }

// TestMalformedRecordIsFatal: a record that does not decode fails the job
// at once (no restart would mend it), and the message says where and what
// to set to skip such records.
func TestMalformedRecordIsFatal(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "in.jsonl"), "{\"S\":\"a\"}\n{\"S\":\n")
	j := fileSourceJob(t, 1, map[string]string{"path": path})
	_, err := readFile(j, 0, format.JSONFormat[struct{ S string }]())
	var fatal *fault.Fatal
	if !errors.As(err, &fatal) || !strings.Contains(err.Error(), path+":2: ") || !strings.Contains(err.Error(), "set sources.src.on-error to skip or dead-letter") {
		t.Errorf("got %v, want a fatal error at line 2 that suggests on-error=skip", err)
	}
}

// TestFileSourceStrict: with strict, a JSON key named time where the type
// says ts is a malformed record instead of a record in the year 1.
func TestFileSourceStrict(t *testing.T) {
	type click struct {
		User string    `json:"user"`
		TS   time.Time `json:"ts"`
	}
	path := writeFile(t, filepath.Join(t.TempDir(), "in.jsonl"), "{\"user\":\"a\",\"time\":\"2024-03-01T08:00:00Z\"}\n")
	got, err := readFile(fileSourceJob(t, 1, map[string]string{"path": path}), 0, format.JSONFormat[click]())
	if err != nil || len(got) != 1 || !got[0].TS.IsZero() {
		t.Fatalf("lenient: %v, %v; want one record with a zero time", got, err)
	}
	_, err = readFile(fileSourceJob(t, 1, map[string]string{"path": path, "strict": "true"}), 0, format.JSONFormat[click]())
	if err == nil || !strings.Contains(err.Error(), `in.jsonl:1: bad JSON: unknown field "time" and missing field "ts" (strict)`) {
		t.Errorf("strict: %v", err)
	}
}

// TestFileSourceClosedWhenJobEnds: when the job ends while the source
// has a file open (it failed elsewhere, or the source waited to hand its
// records on), the file is closed.
func TestFileSourceClosedWhenJobEnds(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, filepath.Join(dir, "in.txt"), "a\nb\n")
	j := fileSourceJob(t, 1, map[string]string{"path": path})
	src := NewSource(j, 0, 0, format.LinesFormat())
	if _, ok := src.Next(); !ok {
		t.Fatal("no first line")
	}
	f := src.lr.f
	j.Cancel(errors.New("another operator failed"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := f.Stat(); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job ended and the source's file is still open")
		}
		time.Sleep(time.Millisecond)
	}
}
