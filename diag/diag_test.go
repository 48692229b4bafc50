package diag_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/diag"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

func TestPosString(t *testing.T) {
	for _, tc := range []struct {
		pos  diag.Pos
		want string
	}{
		{diag.Pos{}, ""},
		{diag.Pos{File: "p.yaml"}, "p.yaml"},
		{diag.Pos{File: "p.yaml", Line: 3}, "p.yaml:3"},
		{diag.Pos{File: "p.yaml", Line: 3, Col: 7}, "p.yaml:3:7"},
	} {
		if got := tc.pos.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.pos, got, tc.want)
		}
	}
	d := diag.Diagnostic{Msg: "no position"}
	if got := d.Error(); got != "no position" {
		t.Errorf("Error() without a position = %q, want the bare message", got)
	}
}

func messages(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Error())
	}
	return out
}

func TestItemsSorted(t *testing.T) {
	var l diag.List
	l.Add(diag.Pos{File: "b.yaml", Line: 1, Col: 1}, "b1")
	l.Add(diag.Pos{File: "a.yaml", Line: 10, Col: 2}, "a10")
	l.Add(diag.Pos{File: "a.yaml", Line: 2, Col: 9}, "a2:9")
	l.Add(diag.Pos{File: "a.yaml", Line: 2, Col: 10}, "a2:10")
	l.Add(diag.Pos{File: "a.yaml", Line: 2, Col: 3}, "a2:3")
	want := []string{
		"a.yaml:2:3: a2:3",
		"a.yaml:2:9: a2:9",
		"a.yaml:2:10: a2:10", // numerically, not as text
		"a.yaml:10:2: a10",
		"b.yaml:1:1: b1",
	}
	if got := messages(l.Items()); !slices.Equal(got, want) {
		t.Errorf("Items() =\n%q\nwant\n%q", got, want)
	}
	if l.Len() != 5 {
		t.Errorf("Len() = %d, want 5", l.Len())
	}
}

func TestItemsStable(t *testing.T) {
	var l diag.List
	at := diag.Pos{File: "p.yaml", Line: 4, Col: 5}
	l.Add(diag.Pos{File: "p.yaml", Line: 9, Col: 1}, "later")
	for _, m := range []string{"zeta", "alpha", "mid"} {
		l.Add(at, "%s", m)
	}
	want := []string{"p.yaml:4:5: zeta", "p.yaml:4:5: alpha", "p.yaml:4:5: mid", "p.yaml:9:1: later"}
	// Sorting again must not reorder problems at one position either.
	for range 3 {
		if got := messages(l.Items()); !slices.Equal(got, want) {
			t.Fatalf("Items() =\n%q\nwant the order they were found in:\n%q", got, want)
		}
	}
}

func TestItemsDeduplicated(t *testing.T) {
	var l diag.List
	p := diag.Pos{File: "p.yaml", Line: 2, Col: 1}
	q := diag.Pos{File: "p.yaml", Line: 3, Col: 1}
	l.Add(p, "same problem")
	l.Add(q, "other line")
	l.Add(p, "same problem")
	l.Add(p, "another problem")
	// Found twice but not in a row: still one.
	l.Add(p, "same problem")
	l.Add(q, "other line")
	want := []string{"p.yaml:2:1: same problem", "p.yaml:2:1: another problem", "p.yaml:3:1: other line"}
	if got := messages(l.Items()); !slices.Equal(got, want) {
		t.Errorf("Items() =\n%q\nwant\n%q", got, want)
	}
	// A message that differs only in its position is not a duplicate.
	var m diag.List
	m.Add(p, "x")
	m.Add(q, "x")
	if got := len(m.Items()); got != 2 {
		t.Errorf("same message at two positions: %d items, want 2", got)
	}
}

func TestErr(t *testing.T) {
	var l diag.List
	if err := l.Err(); err != nil {
		t.Errorf("empty list: Err() = %v, want nil", err)
	}
	l.Add(diag.Pos{File: "p.yaml", Line: 1, Col: 2}, "bad %s", "thing")
	err := l.Err()
	if err == nil {
		t.Fatal("Err() = nil for a list with a problem")
	}
	if got, want := err.Error(), "p.yaml:1:2: bad thing\n"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestAppend(t *testing.T) {
	var a, b diag.List
	a.Add(diag.Pos{File: "p.yaml", Line: 5, Col: 1}, "from a")
	b.Add(diag.Pos{File: "p.yaml", Line: 1, Col: 1}, "from b")
	a.Append(&b)
	a.Append(nil)
	want := []string{"p.yaml:1:1: from b", "p.yaml:5:1: from a"}
	if got := messages(a.Items()); !slices.Equal(got, want) {
		t.Errorf("after Append: %q, want %q", got, want)
	}
}

func TestFormatRelativizes(t *testing.T) {
	dir := t.TempDir()
	var l diag.List
	l.Add(diag.Pos{File: filepath.Join(dir, "pipes", "p.yaml"), Line: 3, Col: 4}, "inside")
	l.Add(diag.Pos{File: filepath.Join(dir, "p.go"), Line: 1, Col: 1}, "go file")
	l.Add(diag.Pos{File: "rel/q.yaml", Line: 2, Col: 2}, "relative")
	l.Add(diag.Pos{}, "nowhere")

	// Sorted by the file as recorded: no file first, then the absolute
	// paths, then the relative one.
	got := l.Format(dir)
	want := "nowhere\n" +
		"p.go:1:1: go file\n" +
		filepath.Join("pipes", "p.yaml") + ":3:4: inside\n" +
		"rel/q.yaml:2:2: relative\n"
	if got != want {
		t.Errorf("Format(dir) =\n%s\nwant\n%s", got, want)
	}
	outside := filepath.Join(filepath.Dir(dir), "elsewhere.yaml")
	var m diag.List
	m.Add(diag.Pos{File: outside, Line: 1, Col: 1}, "up")
	if got, want := m.Format(dir), filepath.Join("..", "elsewhere.yaml")+":1:1: up\n"; got != want {
		t.Errorf("Format of a file outside dir = %q, want %q", got, want)
	}
	if got, want := m.Format(""), outside+":1:1: up\n"; got != want {
		t.Errorf(`Format("") = %q, want the path unchanged, %q`, got, want)
	}
}

func TestReportKeepsStructure(t *testing.T) {
	var l diag.List
	at := diag.Pos{File: "p.yaml", Line: 3, Col: 14}
	l.Report(diag.Diagnostic{Pos: at, Kind: diag.BadValue, Key: "checkpoint.interval", Msg: "checkpoint.interval must be more than 0"})
	// The same problem found again, classified otherwise, is listed once.
	l.Report(diag.Diagnostic{Pos: at, Key: "checkpoint.interval", Msg: "checkpoint.interval must be more than 0"})
	l.Report(diag.Diagnostic{Pos: at, Kind: diag.Misplaced, Key: "emit", Node: "counts", Msg: "emit is for reduce and aggregate"})
	got := l.Items()
	want := []diag.Diagnostic{
		{Pos: at, Kind: diag.BadValue, Key: "checkpoint.interval", Msg: "checkpoint.interval must be more than 0"},
		{Pos: at, Kind: diag.Misplaced, Key: "emit", Node: "counts", Msg: "emit is for reduce and aggregate"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Items() = %+v\nwant %+v", got, want)
	}
	if s := l.Format(""); s != "p.yaml:3:14: checkpoint.interval must be more than 0\np.yaml:3:14: emit is for reduce and aggregate\n" {
		t.Errorf("Format prints the structure:\n%s", s)
	}
}
