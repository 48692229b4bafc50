package settings

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		s     *Setting
		value string
		want  any    // the value, when err is ""
		err   string // the message, as --set words it
	}{
		{Lookup("parallelism"), "4", 4, ""},
		{Lookup("parallelism"), "0", nil, `parallelism wants a whole number from 1 to 32768, got "0"`},
		{Lookup("parallelism"), "two", nil, `parallelism wants a whole number from 1 to 32768, got "two"`},
		{Lookup("max-parallelism"), "9223372036854775807", nil, `max-parallelism wants a whole number from 1 to 32768, got "9223372036854775807"`},
		{Node(AnyNode, "", "uid"), "../../escape", nil, `uid wants letters, digits, '_', '-' and '.', starting with a letter, digit or '_', at most 64 (it names the node's files in checkpoints), got "../../escape"`},
		{Lookup("restart.attempts"), "0", 0, ""},
		{Lookup("restart.attempts"), "-1", nil, `restart.attempts wants a whole number of at least 0, got "-1"`},
		{Lookup("restart.multiplier"), "1.5", 1.5, ""},
		{Lookup("restart.multiplier"), "0.5", nil, `restart.multiplier wants a number of at least 1, got "0.5"`},
		{Lookup("checkpoint.interval"), "1m30s", 90 * time.Second, ""},
		{Lookup("checkpoint.interval"), "5 seconds", nil, `checkpoint.interval wants a duration such as 500ms, 10s, 5m or 1h, got "5 seconds"`},
		{Lookup("checkpoint.interval"), "0", nil, "checkpoint.interval must be more than 0: to turn checkpoints off, use --set checkpoint.mode=none"},
		{Lookup("checkpoint.interval"), "-1s", nil, `checkpoint.interval must not be negative, got "-1s"`},
		{Lookup("checkpoint.min-pause"), "0", time.Duration(0), ""},
		{Lookup("checkpoint.mode"), "none", "none", ""},
		{Lookup("checkpoint.mode"), "twice", nil, `checkpoint.mode wants exactly-once, at-least-once or none, got "twice"`},
		{Lookup("checkpoint.dir"), "", nil, "checkpoint.dir must not be empty"},
		{Lookup("state.backend"), "pebble", "pebble", ""},
		{Lookup("state.backend"), "rocksdb", nil, `state.backend wants memory or pebble, got "rocksdb"`},
		{Lookup("name"), "word-count", "word-count", ""},
		{Lookup("name"), "Bad_Name", nil, `name wants lowercase letters, digits and dashes, starting with a letter, at most 64 (it names the program), got "Bad_Name"`},
		{Lookup("version"), "1", 1, ""},
		{Lookup("version"), "2", nil, `version wants 1, got "2"`},
		{Node(Operator, "", "name"), "a.b", nil, `name wants letters, digits, '_' and '-', starting with a letter or '_', at most 64 ('.' is kept for side outputs such as counts.late), got "a.b"`},
		{Node(Operator, "", "input"), "counts.late", "counts.late", ""},
		{Node(Operator, "", "window.tumbling"), "500us", nil, `window.tumbling must be at least 1ms, got "500us"`},
		{Node(Operator, "join", "join.between"), "-5s", -5 * time.Second, ""},
		{Node(Operator, "join", "join.between"), "soon", nil, `join.between wants a duration such as -5s, 500ms, 10s or 1m, got "soon"`},
		{Node(Operator, "union", "union"), "true", true, ""},
		{Node(Operator, "union", "union"), "false", nil, `union wants true, got "false"`},
		{LookupConnector(Source, "file").Option("header"), "no", nil, `header wants true or false, got "no"`},
		{LookupConnector(Source, "file").Option("delimiter"), ";", ";", ""},
		{LookupConnector(Source, "file").Option("delimiter"), "\n", nil, `delimiter wants one character other than a quote or a line break, got "\n"`},
		{LookupConnector(Source, "generator").Option("rate"), "fast", nil, `rate wants a number of at least 0, got "fast"`},
		{LookupConnector(Sink, "file").Option("path"), "", nil, "path must not be empty"},
	} {
		got, err := tc.s.Parse(tc.value)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s.Parse(%q) = %v, %v; want the error %q", tc.s.Path, tc.value, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s.Parse(%q) = %#v, %v; want %#v", tc.s.Path, tc.value, got, err, tc.want)
		}
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Path != tc.s.Path || e.Value != tc.value {
				t.Errorf("%s.Parse(%q): error %#v, want an *Error with the path and the value", tc.s.Path, tc.value, err)
			}
		}
	}
}

// bracketSyntax names keys as <path> and examples as <path=value>.
type bracketSyntax struct{}

func (bracketSyntax) Key(path string) string { return "<" + path + ">" }
func (bracketSyntax) Example(path string, values ...string) string {
	return "<" + path + "=" + strings.Join(values, ",") + ">"
}

func TestErrorMessage(t *testing.T) {
	_, err := Lookup("checkpoint.interval").Parse("0s")
	if got, want := err.(*Error).Message(bracketSyntax{}), "<checkpoint.interval> must be more than 0: to turn checkpoints off, use <checkpoint.mode=none>"; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	e := LookupConnector(Source, "file").Option("header").CheckFormat("lines")
	if got, want := e.Message(bracketSyntax{}), "<header> applies to format csv only, and the source reads lines"; got != want {
		t.Errorf("CheckFormat(lines) = %q, want %q", got, want)
	}
	if e := LookupConnector(Source, "file").Option("header").CheckFormat("csv"); e != nil {
		t.Errorf("CheckFormat(csv) = %v, want nil", e)
	}
}

// TestTable checks what the rest of the package takes for granted.
func TestTable(t *testing.T) {
	type form struct {
		owner string // "" or the connector
		scope Scope
		path  string
		kinds string
	}
	all := map[*Setting]string{}
	for _, s := range table {
		all[s] = ""
	}
	for _, c := range connectors {
		for _, o := range c.Options {
			all[o] = c.Name
		}
	}
	seen := map[form]bool{}
	for s, owner := range all {
		what := fmt.Sprintf("%s (%s %s)", s.Path, owner, s.Scope)
		f := form{owner, s.Scope, s.Path, strings.Join(s.Kinds, ",")}
		if seen[f] {
			t.Errorf("%s: listed twice", what)
		}
		seen[f] = true
		if s.Help == "" || s.Scope == 0 || s.Kind == "" {
			t.Errorf("%s: no help, scope or kind", what)
		}
		if p := s.Parent(); p != "" {
			if parent := Node(s.Scope, "", p); parent == nil || parent.Kind != Mapping {
				t.Errorf("%s: its section %s is not a Mapping of the same scope", what, p)
			}
		}
		if s.Default != "" {
			s.DefaultValue() // panics when the default does not parse
		}
		if s.Default != "" && (s.Required || s.DefaultDoc != "") {
			t.Errorf("%s: a default and Required or DefaultDoc", what)
		}
		for _, k := range s.Kinds {
			if !slices.Contains(OperatorKinds, k) {
				t.Errorf("%s: unknown operator kind %q", what, k)
			}
		}
		switch {
		case s.Kind == Enum && len(s.Values) == 0,
			(s.Kind == Name || s.Kind == NodeRef) && (s.Pattern == nil || s.PatternDoc == ""),
			s.Kind == Nodes && s.Nodes == 0:
			t.Errorf("%s: a %s without its values, pattern or nodes", what, s.Kind)
		}
		if s.Pattern != nil && (!s.Pattern.MatchString("a1") || s.Pattern.MatchString("a/b") || s.Pattern.MatchString(strings.Repeat("a", 65))) {
			// The first match compiles the pattern, and panics when it
			// does not compile.
			t.Errorf("%s: pattern %s takes a1, or a/b, or 65 letters", what, s.Pattern)
		}
	}
	for _, kind := range OperatorKinds {
		if s := Node(Operator, kind, kind); s == nil || !slices.Equal(s.Kinds, []string{kind}) {
			t.Errorf("operator kind %s has no kind key of its own", kind)
		}
	}
}

func TestLookup(t *testing.T) {
	if s := Lookup("checkpoint.interval"); s == nil || s.Kind != Duration || s.Default != "10s" || s.Static {
		t.Errorf("Lookup(checkpoint.interval) = %+v", s)
	}
	if s := Lookup("window"); s != nil {
		t.Errorf("Lookup(window) = %+v, want nil: window is an operator's key", s)
	}
	if s := Node(Operator, "join", "key"); s == nil || !s.List || s.Len != 2 {
		t.Errorf("the key of a join: %+v, want a list of two", s)
	}
	if s := Node(Operator, "reduce", "key"); s == nil || s.List {
		t.Errorf("the key of a reduce: %+v, want one function", s)
	}
	if s := Node(Sink, "", "parallelism"); s == nil || s.Static {
		t.Errorf("a sink's parallelism: %+v, want a setting --set can change", s)
	}
	if got, want := KindsText("key"), "reduce, aggregate, process and join"; got != want {
		t.Errorf("KindsText(key) = %q, want %q", got, want)
	}
	if got := Names(Keys(Pipeline, "checkpoint")); !slices.Equal(got, []string{"mode", "interval", "timeout", "min-pause", "retain", "dir"}) {
		t.Errorf("Keys(Pipeline, checkpoint) = %v", got)
	}
	if got := Names(Keys(Sink, "")); !slices.Equal(got, []string{"name", "uid", "parallelism", "input", "connector"}) {
		t.Errorf("Keys(Sink) = %v", got)
	}
	if c := LookupConnector(Source, "file"); c == nil || c.Option("path") == nil || c.Option("path").Scope != Source {
		t.Errorf("LookupConnector(Source, file) = %+v", c)
	}
	if c := LookupConnector(Sink, "generator"); c != nil {
		t.Errorf("LookupConnector(Sink, generator) = %+v, want nil", c)
	}
	if got := ConnectorNames(Sink); !slices.Equal(got, []string{"file", "stdout", "kafka"}) {
		t.Errorf("ConnectorNames(Sink) = %v", got)
	}
}

func TestOverridable(t *testing.T) {
	var got []string
	for _, s := range Overridable() {
		got = append(got, s.Path)
	}
	want := []string{"parallelism", "max-parallelism",
		"checkpoint.mode", "checkpoint.interval", "checkpoint.timeout", "checkpoint.min-pause", "checkpoint.retain", "checkpoint.dir",
		"restart.strategy", "restart.attempts", "restart.delay", "restart.max-delay", "restart.multiplier", "restart.max-failures", "restart.interval"}
	if !slices.Equal(got, want) {
		t.Errorf("Overridable() = %v\nwant %v", got, want)
	}
}
