// Package diag holds the compiler's diagnostics: every problem found in a
// pipeline, each printed as "file:line:col: message".
//
// The front ends and the type checker collect all problems before giving up,
// so a user fixes a pipeline in one round instead of one error at a time.
//
// A diagnostic is an error or a warning. An error stops the compiler; a
// warning, printed as "file:line:col: warning: message", points at a
// pipeline that compiles and runs but probably not as its author means
// (its output changes from run to run, say), and stops nothing.
//
// A diagnostic carries its structure beside its text: what kind of problem
// it is, the key it is about (a path of the settings table, such as
// checkpoint.interval or window.every) and the node. The text is written by
// the front end the pipeline came from, which names keys in its own syntax
// (`checkpoint.interval` in YAML, `checkpoint.interval=` in a //pipegen:
// directive); the structure is the same for both, for tools that act on a
// problem rather than print it.
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

// Kind says what kind of problem a diagnostic reports.
type Kind string

// The kinds of problems.
const (
	Syntax      Kind = "syntax"      // malformed YAML or directive
	UnknownKey  Kind = "unknown-key" // a key the place does not have
	Duplicate   Kind = "duplicate"   // a key, name, uid or pipeline given twice
	Missing     Kind = "missing"     // a required key or value is absent
	BadValue    Kind = "bad-value"   // a value the key does not take
	Misplaced   Kind = "misplaced"   // a key that does not apply where it is (emit on a map)
	Conflict    Kind = "conflict"    // keys or values that exclude each other
	Graph       Kind = "graph"       // inputs, cycles
	Function    Kind = "function"    // a Go function that is missing or does not fit
	Type        Kind = "type"        // a Go type that cannot be used where it is
	Unsupported Kind = "unsupported" // valid, but not supported yet
	GoPackage   Kind = "go-package"  // the user's Go package does not load
	// Order is a warning: records of one key may reach a keyed node in
	// another order on every run.
	Order Kind = "order"
	// Unread is a warning: a node whose records reach no sink.
	Unread Kind = "unread"
)

// Severity says whether a diagnostic stops the compiler.
type Severity int

// The severities; the zero value is Error.
const (
	Error   Severity = iota // the pipeline cannot be compiled
	Warning                 // it compiles, but probably does not do what its author means
)

// Diagnostic is one problem at one position.
type Diagnostic struct {
	Pos Pos
	// Kind is what kind of problem it is; "" when not classified.
	Kind Kind
	// Key is the path of the key the problem is about, as in the settings
	// table (runtime/settings): "checkpoint.interval" for a pipeline's key,
	// "window.every" or "path" for a node's; "" when none.
	Key string
	// Node is the name of the node the problem is about, "" when none.
	Node string
	// Msg is the message, written in the syntax of the front end.
	Msg string
	// Severity is Error (the zero value) or Warning.
	Severity Severity
}

func (d Diagnostic) Error() string {
	msg := d.Msg
	if d.Severity == Warning {
		msg = "warning: " + msg
	}
	if s := d.Pos.String(); s != "" {
		return s + ": " + msg
	}
	return msg
}

// List collects diagnostics. The zero value is ready to use.
type List struct {
	items []Diagnostic
}

// Add records a problem at pos.
func (l *List) Add(pos Pos, format string, args ...any) {
	l.items = append(l.items, Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// Report records a diagnostic.
func (l *List) Report(d Diagnostic) { l.items = append(l.items, d) }

// Append adds every diagnostic of other.
func (l *List) Append(other *List) {
	if other != nil {
		l.items = append(l.items, other.items...)
	}
}

// Len is the number of problems recorded, warnings included; 0 for a nil
// list.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.items)
}

// HasErrors reports whether any problem recorded is an error, not a
// warning.
func (l *List) HasErrors() bool {
	for _, d := range l.items {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns a list of the errors of l, without its warnings: what to
// print when there are errors, since warnings are about a pipeline that
// compiles.
func (l *List) Errors() *List {
	out := &List{}
	for _, d := range l.items {
		if d.Severity == Error {
			out.items = append(out.items, d)
		}
	}
	return out
}

// Items returns the diagnostics sorted by file, line and column; problems at
// the same position keep the order they were found in. A problem found
// twice (the same message at the same position) is listed once.
func (l *List) Items() []Diagnostic {
	type printed struct {
		pos Pos
		msg string
		sev Severity
	}
	out := make([]Diagnostic, 0, len(l.items))
	seen := make(map[printed]bool, len(l.items))
	for _, d := range l.items {
		if p := (printed{d.Pos, d.Msg, d.Severity}); !seen[p] {
			seen[p] = true
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return out
}

// Err returns the list as an error, or nil when it holds no error (only
// warnings, or nothing).
func (l *List) Err() error {
	if !l.HasErrors() {
		return nil
	}
	return l
}

func (l *List) Error() string { return l.Format("") }

// Format renders one diagnostic per line, errors and warnings in the order
// of their positions. Absolute file names are shown relative to dir when
// dir is not empty.
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
