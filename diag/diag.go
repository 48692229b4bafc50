// Package diag holds the compiler's diagnostics: every problem found in a
// pipeline, each printed as "file:line:col: message".
//
// The front ends and the type checker collect all problems before giving up,
// so a user fixes a pipeline in one round instead of one error at a time.
package diag

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Pos is a position in a file. File is as the compiler was given it, or
// absolute; List.Format makes it relative to the working directory.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one problem at one position.
type Diagnostic struct {
	Pos Pos
	Msg string
}

func (d Diagnostic) Error() string {
	if s := d.Pos.String(); s != "" {
		return s + ": " + d.Msg
	}
	return d.Msg
}

// List collects diagnostics. The zero value is ready to use.
type List struct {
	items []Diagnostic
}

// Add records a problem at pos.
func (l *List) Add(pos Pos, format string, args ...any) {
	l.items = append(l.items, Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// Append adds every diagnostic of other.
func (l *List) Append(other *List) {
	if other != nil {
		l.items = append(l.items, other.items...)
	}
}

// Len is the number of problems recorded.
func (l *List) Len() int { return len(l.items) }

// Items returns the diagnostics sorted by file, line and column; problems at
// the same position keep the order they were found in. A problem found
// twice is listed once.
func (l *List) Items() []Diagnostic {
	out := make([]Diagnostic, 0, len(l.items))
	seen := make(map[Diagnostic]bool, len(l.items))
	for _, d := range l.items {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return out
}

// Err returns the list as an error, or nil when it is empty.
func (l *List) Err() error {
	if l.Len() == 0 {
		return nil
	}
	return l
}

func (l *List) Error() string { return l.Format("") }

// Format renders one diagnostic per line. Absolute file names are shown
// relative to dir when dir is not empty.
func (l *List) Format(dir string) string {
	var b strings.Builder
	for _, d := range l.Items() {
		if dir != "" && filepath.IsAbs(d.Pos.File) {
			if rel, err := filepath.Rel(dir, d.Pos.File); err == nil {
				d.Pos.File = rel
			}
		}
		b.WriteString(d.Error())
		b.WriteByte('\n')
	}
	return b.String()
}
