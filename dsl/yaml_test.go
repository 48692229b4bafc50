package dsl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/diag"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/settings"
)

// want is one expected diagnostic: its exact "line:col" and a part of its
// message.
type want struct {
	pos string
	msg string
}

// parse parses src as p.yaml and returns the diagnostics as "line:col: msg".
func parse(t *testing.T, src string) (*Spec, []diag.Diagnostic) {
	t.Helper()
	spec, diags := ParseYAML("p.yaml", []byte(src))
	if spec == nil {
		t.Fatal("ParseYAML returned a nil spec")
	}
	if diags == nil {
		t.Fatal("ParseYAML returned a nil list")
	}
	items := diags.Items()
	for _, d := range items {
		if d.Pos.File != "p.yaml" {
			t.Errorf("%v: the file is %q, want p.yaml as given", d, d.Pos.File)
		}
	}
	return spec, items
}

func checkDiags(t *testing.T, got []diag.Diagnostic, wants []want) {
	t.Helper()
	ok := len(got) == len(wants)
	for i := 0; ok && i < len(got); i++ {
		pos := fmt.Sprintf("%d:%d", got[i].Pos.Line, got[i].Pos.Col)
		ok = pos == wants[i].pos && strings.Contains(got[i].Msg, wants[i].msg)
	}
	if ok {
		return
	}
	var b strings.Builder
	for _, d := range got {
		fmt.Fprintf(&b, "\t%d:%d: %s\n", d.Pos.Line, d.Pos.Col, d.Msg)
	}
	var w strings.Builder
	for _, d := range wants {
		fmt.Fprintf(&w, "\t%s: ...%s...\n", d.pos, d.msg)
	}
	t.Errorf("got %d diagnostics:\n%swant %d:\n%s", len(got), b.String(), len(wants), w.String())
}

func TestParseYAMLDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []want
	}{
		{
			name: "unknown key with a suggestion",
			src:  "version: 1\nname: x\nparalelism: 2\n",
			want: []want{{"3:1", `unknown key "paralelism" in pipeline, did you mean "parallelism"? (known keys: version, name, package, parallelism,`}},
		},
		{
			name: "unknown key far from every known one",
			src:  "version: 1\nname: x\ncolour: red\n",
			want: []want{{"3:1", `unknown key "colour" in pipeline (known keys: version,`}},
		},
		{
			name: "unknown key in a section",
			src:  "version: 1\nname: x\ncheckpoint:\n  mode: none\n  intervall: 5s\n",
			want: []want{{"5:3", `unknown key "intervall" in checkpoint, did you mean "interval"?`}},
		},
		{
			name: "unknown key in an operator",
			src: `version: 1
name: x
operators:
  - name: a
    input: s
    mapp: F
`,
			want: []want{
				{"4:5", `operator "a" has no kind: give it one of map, filter, flatmap, reduce, aggregate, process, join, union`},
				{"6:5", `unknown key "mapp" in operator "a", did you mean "map"?`},
			},
		},
		{
			name: "key of another section",
			src: `version: 1
name: x
sources:
  - name: s
    input: t
    connector: file
    path: in
sinks:
  - name: out
    inputs: [s]
    connector: stdout
`,
			want: []want{
				{"5:5", `unknown key "input" in source "s" (known keys: name, uid, parallelism, connector, timestamps)`},
				{"10:5", `unknown key "inputs" in sink "out", did you mean "input"?`},
			},
		},
		{
			name: "unknown connector option with a suggestion",
			src: `version: 1
name: x
sinks:
  - name: out
    input: a
    connector: file
    path: out
    fromat: jsonl
`,
			want: []want{{"8:5", `unknown key "fromat" in sink "out", did you mean "format"? (the file sink takes path, format, header, delimiter)`}},
		},
		{
			name: "unknown connector",
			src:  "version: 1\nname: x\nsources:\n  - name: s\n    connector: postgres\n    topic: t\n",
			want: []want{{"5:16", `connector wants file, generator or kafka, got "postgres"`}},
		},
		{
			name: "no connector",
			src:  "version: 1\nname: x\nsources:\n  - name: s\n    path: in.txt\n",
			want: []want{{"4:5", "source \"s\" has no connector: add `connector:` (one of file, generator, kafka)"}},
		},
		{
			name: "duplicate key",
			src:  "version: 1\nname: x\nname: y\n",
			want: []want{{"3:1", `duplicate key "name" in pipeline (first at line 2)`}},
		},
		{
			name: "duplicate key in a node",
			src: `version: 1
name: x
operators:
  - name: a
    input: s
    map: F
    input: t
`,
			want: []want{{"7:5", `duplicate key "input" in operator "a" (first at line 5)`}},
		},
		{
			name: "list where a value is expected",
			src:  "version: 1\nname: [a, b]\n",
			want: []want{{"2:7", "name wants a single value, got a list"}},
		},
		{
			name: "mapping where a value is expected",
			src:  "version: 1\nname: x\nparallelism: { n: 2 }\n",
			want: []want{{"3:14", "parallelism wants a single value, got a mapping"}},
		},
		{
			name: "value where a list is expected",
			src:  "version: 1\nname: x\nsources: lines\n",
			want: []want{{"3:10", "sources wants a list of sources (each item starting with `- name:`), got a value (\"lines\")"}},
		},
		{
			name: "value where a list of inputs is expected",
			src:  "version: 1\nname: x\noperators:\n  - name: u\n    inputs: a\n    union: true\n",
			want: []want{{"5:13", `inputs wants a list such as [a, b], got a value ("a")`}},
		},
		{
			name: "value where a mapping is expected",
			src:  "version: 1\nname: x\ncheckpoint: 5s\n",
			want: []want{{"3:13", `checkpoint wants a mapping of keys (mode, interval, timeout, min-pause, retain, dir), got a value ("5s")`}},
		},
		{
			name: "list item that is not a mapping",
			src:  "version: 1\nname: x\noperators:\n  - words\n",
			want: []want{{"4:5", "each of operators is a mapping starting with `name:`, got a value (\"words\")"}},
		},
		{
			name: "key without a value",
			src:  "version: 1\nname:\n",
			want: []want{{"2:6", "name has no value"}},
		},
		{
			name: "missing version",
			src:  "name: x\nsources: []\n",
			want: []want{{"1:1", "missing version: start the file with `version: 1`"}},
		},
		{
			name: "version that is not a number",
			src:  "version: one\nname: x\n",
			want: []want{{"1:10", `unsupported pipeline version "one": this pipegen reads version 1`}},
		},
		{
			name: "version as a list",
			src:  "version: [1]\nname: x\n",
			want: []want{{"1:10", "version wants a number, got a list"}},
		},
		{
			name: "wrong version stops everything else",
			src:  "name: Not Valid\nbogus: 1\nsources: x\nversion: 2\noperators:\n  - map: F\n",
			want: []want{{"4:10", `unsupported pipeline version "2": this pipegen reads version 1`}},
		},
		{
			name: "empty file",
			src:  "",
			want: []want{{"1:1", "the file is empty: a pipeline starts with `version: 1`"}},
		},
		{
			name: "only comments",
			src:  "# a pipeline, one day\n",
			want: []want{{"1:1", "the file is empty"}},
		},
		{
			name: "malformed YAML keeps yaml's line",
			src:  "version: 1\nname: broken\nsources:\n  - name: lines\n    connector: file\n     path: input.txt\n",
			want: []want{{"6:1", "malformed YAML: mapping values are not allowed in this context"}},
		},
		{
			name: "malformed YAML further down",
			src:  "version: 1\nname: x\nsources:\n  - name: s\n    connector: file\n    path: \"in.txt\n",
			want: []want{{"6:1", "malformed YAML: found unexpected end of stream"}},
		},
		{
			name: "not a mapping",
			src:  "- version: 1\n",
			want: []want{{"1:1", "a pipeline is a mapping of keys (version, name, sources, ...), not a list"}},
		},
		{
			name: "missing name",
			src:  "version: 1\nsources: []\n",
			want: []want{{"1:1", "missing name: add `name: my-pipeline`"}},
		},
		{
			name: "operator without a name",
			src:  "version: 1\nname: x\noperators:\n  - input: s\n    map: F\n",
			want: []want{{"4:5", "operator without a name: add `name:`"}},
		},
		{
			name: "operator with an empty name",
			src:  "version: 1\nname: x\noperators:\n  - name:\n    input: s\n    map: F\n",
			want: []want{{"4:10", "name has no value"}},
		},
		{
			name: "operator with two kinds",
			src: `version: 1
name: x
operators:
  - name: a
    input: s
    map: F
    filter: G
`,
			want: []want{{"7:5", "operator has two kinds, map and filter: an operator does one thing, split it into two"}},
		},
		{
			name: "operator without a kind",
			src:  "version: 1\nname: x\noperators:\n  - name: a\n    input: s\n",
			want: []want{{"4:5", `operator "a" has no kind`}},
		},
		{
			name: "union false",
			src:  "version: 1\nname: x\noperators:\n  - name: u\n    inputs: [a, b]\n    union: false\n",
			want: []want{{"6:12", `union wants true, got "false"`}},
		},
		{
			name: "aggregate without add",
			src: `version: 1
name: x
operators:
  - name: agg
    input: s
    key: K
    aggregate: { result: R }
`,
			want: []want{{"7:16", "aggregate needs `add: AddFunc` (func(acc *A, in In))"}},
		},
		{
			name: "aggregate with a misspelt key",
			src: `version: 1
name: x
operators:
  - name: agg
    input: s
    key: K
    aggregate:
      add: A
      reslt: R
`,
			want: []want{{"9:7", `unknown key "reslt" in aggregate, did you mean "result"? (known keys: add, result, merge)`}},
		},
		{
			name: "aggregate as a value",
			src:  "version: 1\nname: x\noperators:\n  - name: agg\n    input: s\n    key: K\n    aggregate: Add\n",
			want: []want{{"7:16", `aggregate wants a mapping of keys (add, result, merge), got a value ("Add")`}},
		},
		{
			name: "join without apply",
			src: `version: 1
name: x
operators:
  - name: j
    inputs: [a, b]
    key: [KA, KB]
    join: { between: [-5s, 5s] }
`,
			want: []want{{"7:11", "join needs `apply: JoinFunc` (func(L, R) Out)"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := parse(t, tc.src)
			checkDiags(t, got, tc.want)
		})
	}
}

func TestSupportedVersionIsTheTables(t *testing.T) {
	if v := settings.Lookup("version").Values; !slices.Equal(v, []string{strconv.Itoa(SupportedVersion)}) {
		t.Errorf("the settings table takes version %v, the parser %d", v, SupportedVersion)
	}
}

func TestParseYAMLWrongVersionReadsNothing(t *testing.T) {
	spec, _ := parse(t, "version: 2\nname: x\nsources:\n  - name: s\n    connector: file\n    path: in\n")
	if spec.Version != 0 || spec.Name.Set || len(spec.Sources) != 0 {
		t.Errorf("a version 2 file was read: version %d, name %+v, %d sources", spec.Version, spec.Name, len(spec.Sources))
	}
}

// TestParseYAMLReportsAll makes sure one call finds every problem of a file,
// not just the first.
func TestParseYAMLReportsAll(t *testing.T) {
	src := `version: 1
name: all
paralelism: 2
checkpoint:
  retain: 0
sources:
  - name: s
    connector: file
    path: in.txt
    pth: x
operators:
  - name: a
    input: s
    map: F
    filter: G
sinks:
  - name: out
    input: a
    connector: stdout
    format: [jsonl]
`
	spec, got := parse(t, src)
	checkDiags(t, got, []want{
		{"3:1", `unknown key "paralelism" in pipeline, did you mean "parallelism"?`},
		{"10:5", `unknown key "pth" in source "s", did you mean "path"?`},
		{"15:5", "operator has two kinds, map and filter"},
		{"20:13", "format wants a single value, got a list"},
	})
	// What is right around the mistakes is still read.
	if len(spec.Sources) != 1 || len(spec.Operators) != 1 || len(spec.Sinks) != 1 {
		t.Fatalf("got %d sources, %d operators, %d sinks; want one of each", len(spec.Sources), len(spec.Operators), len(spec.Sinks))
	}
	if op := spec.Operators[0]; op.Kind.V != "map" || op.Fn.V != "F" {
		t.Errorf("operator a: kind %q fn %q, want the first kind, map F", op.Kind.V, op.Fn.V)
	}
}

func TestParseYAMLSpec(t *testing.T) {
	src := `version: 1
name: wordcount
package: ./wc
parallelism: 2
max-parallelism: 64
checkpoint:
  mode: at-least-once
  interval: 5s
  dir: cps
state:
  backend: memory
sources:
  - name: lines
    uid: lines-v2
    connector: file
    path: input.txt
    format: lines
  - name: clicks
    connector: file
    path: clicks.jsonl
    format: jsonl
    type: Click
    timestamps: { extract: At, max-out-of-orderness: 2s }
operators:
  - name: words
    input: lines
    parallelism: 4
    flatmap: SplitWords
  - name: joined
    inputs: [words, clicks]
    key: [WordKey, ClickKey]
    join: { apply: Match, between: [-5s, 5s] }
  - name: counts
    input: joined
    key: MatchKey
    window: { tumbling: 10s, time: processing }
    aggregate:
      add: AddMatch
      result: EmitCount
    emit: final
sinks:
  - name: out
    input: counts
    connector: file
    path: out
    format: jsonl
`
	spec, diags := parse(t, src)
	checkDiags(t, diags, nil)

	at := func(line, col int) diag.Pos { return diag.Pos{File: "p.yaml", Line: line, Col: col} }
	str := func(v string, line, col int) Str { return Str{V: v, Pos: at(line, col), Set: true} }
	eq := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %+v, want %+v", what, got, want)
		}
	}

	eq("File", spec.File, "p.yaml")
	eq("Version", spec.Version, 1)
	eq("Name", spec.Name, str("wordcount", 2, 7))
	eq("Package", spec.Package, str("./wc", 3, 10))
	eq("parallelism", spec.Settings["parallelism"], str("2", 4, 14))
	eq("max-parallelism", spec.Settings["max-parallelism"], str("64", 5, 18))
	eq("checkpoint.mode", spec.Settings["checkpoint.mode"], str("at-least-once", 7, 9))
	eq("checkpoint.interval", spec.Settings["checkpoint.interval"], str("5s", 8, 13))
	eq("checkpoint.dir", spec.Settings["checkpoint.dir"], str("cps", 9, 8))
	eq("checkpoint.timeout.Set", spec.Settings["checkpoint.timeout"].Set, false)
	eq("state.backend", spec.Settings["state.backend"], str("memory", 11, 12))
	eq("settings", len(spec.Settings), 6)

	if len(spec.Sources) != 2 || len(spec.Operators) != 3 || len(spec.Sinks) != 1 {
		t.Fatalf("got %d sources, %d operators, %d sinks; want 2, 3, 1", len(spec.Sources), len(spec.Operators), len(spec.Sinks))
	}
	var names []string
	for _, n := range spec.Nodes() {
		names = append(names, n.Name.V)
	}
	eq("Nodes()", names, []string{"lines", "clicks", "words", "joined", "counts", "out"})

	lines := spec.Sources[0]
	eq("lines.Section", lines.Section, Sources)
	eq("lines.Pos", lines.Pos, at(13, 5))
	eq("lines.Name", lines.Name, str("lines", 13, 11))
	eq("lines.UID", lines.UID, str("lines-v2", 14, 10))
	eq("lines.Kind", lines.Kind.V, "source")
	eq("lines.Connector", lines.Connector, str("file", 15, 16))
	path, ok := lines.Option("path")
	if !ok {
		t.Fatal(`lines.Option("path") not found`)
	}
	eq("path option name", path.Name, str("path", 16, 5))
	eq("path option value", path.Value, str("input.txt", 16, 11))
	if _, ok := lines.Option("type"); ok {
		t.Error(`lines.Option("type") found, but the source has no type`)
	}
	eq("lines options", len(lines.Options), 2)

	clicks := spec.Sources[1]
	typ, _ := clicks.Option("type")
	eq("clicks type", typ.Value, str("Click", 22, 11))
	if clicks.Timestamps == nil {
		t.Fatal("clicks.Timestamps is nil")
	}
	eq("clicks.Timestamps.Pos", clicks.Timestamps.Pos, at(23, 5))
	eq("clicks.Timestamps.Extract", clicks.Timestamps.Extract, str("At", 23, 28))
	eq("clicks.Timestamps.MaxOutOfOrderness", clicks.Timestamps.MaxOutOfOrderness, str("2s", 23, 54))

	words := spec.Operators[0]
	eq("words.Inputs", words.Inputs, []Str{str("lines", 26, 12)})
	eq("words.Parallelism", words.Parallelism, str("4", 27, 18))
	eq("words.Kind", words.Kind, str("flatmap", 28, 5))
	eq("words.Fn", words.Fn, str("SplitWords", 28, 14))

	joined := spec.Operators[1]
	eq("joined.Inputs", joined.Inputs, []Str{str("words", 30, 14), str("clicks", 30, 21)})
	eq("joined.Keys", joined.Keys, []Str{str("WordKey", 31, 11), str("ClickKey", 31, 20)})
	eq("joined.Kind", joined.Kind, str("join", 32, 5))
	eq("joined.Apply", joined.Apply, str("Match", 32, 20))
	eq("joined.Between", joined.Between, []Str{str("-5s", 32, 37), str("5s", 32, 42)})
	eq("joined.Fn.Set", joined.Fn.Set, false)

	counts := spec.Operators[2]
	eq("counts.Keys", counts.Keys, []Str{str("MatchKey", 35, 10)})
	if counts.Window == nil {
		t.Fatal("counts.Window is nil")
	}
	eq("counts.Window.Pos", counts.Window.Pos, at(36, 5))
	eq("counts.Window.Tumbling", counts.Window.Tumbling, str("10s", 36, 25))
	eq("counts.Window.Time", counts.Window.Time, str("processing", 36, 36))
	eq("counts.Add", counts.Add, str("AddMatch", 38, 12))
	eq("counts.Result", counts.Result, str("EmitCount", 39, 15))
	eq("counts.Emit", counts.Emit, str("final", 40, 11))

	out := spec.Sinks[0]
	eq("out.Section", out.Section, Sinks)
	eq("out.Kind", out.Kind.V, "sink")
	eq("out.Inputs", out.Inputs, []Str{str("counts", 43, 12)})
	format, _ := out.Option("format")
	eq("out format", format.Value, str("jsonl", 46, 13))
}
