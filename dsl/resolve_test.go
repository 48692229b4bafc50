package dsl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/diag"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/settings"
)

// The fixtures are Go packages of this module under testdata/, invisible to
// `go build ./...`; go/packages loads them by directory.
const fixturePkg = "github.com/pipegen/pipegen/dsl/testdata/"

// resolveFile parses and resolves the pipeline at path; the file must be
// free of structural problems.
func resolveFile(t *testing.T, path string) (*ir.Pipeline, *diag.List) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, diags := ParseYAML(path, data)
	if diags.Len() > 0 {
		t.Fatalf("ParseYAML(%s):\n%s", path, diags.Format(""))
	}
	return Resolve(spec)
}

// resolveOK resolves testdata/<name>/pipeline.yaml, which must be right:
// no errors, no warnings.
func resolveOK(t *testing.T, name string) *ir.Pipeline {
	t.Helper()
	p, warnings := resolveWarned(t, name)
	if len(warnings) > 0 {
		t.Fatalf("Resolve(%s) warns:\n%s", name, strings.Join(warnings, "\n"))
	}
	return p
}

// resolveWarned resolves testdata/<name>/pipeline.yaml, which must have no
// errors, and returns its IR and its warnings.
func resolveWarned(t *testing.T, name string) (*ir.Pipeline, []string) {
	t.Helper()
	p, diags := resolveFile(t, filepath.Join("testdata", name, "pipeline.yaml"))
	if diags.HasErrors() {
		t.Fatalf("Resolve(%s):\n%s", name, diags.Format(""))
	}
	if p == nil {
		t.Fatalf("Resolve(%s) returned no IR and no errors", name)
	}
	var warnings []string
	for _, d := range diags.Items() {
		if d.Severity != diag.Warning || d.Kind != diag.Order {
			t.Errorf("Resolve(%s): %s: severity %v, kind %q; want a warning of kind order", name, d.Error(), d.Severity, d.Kind)
		}
		warnings = append(warnings, d.Error())
	}
	return p, warnings
}

func nodeNames(p *ir.Pipeline) []string {
	var names []string
	for _, n := range p.Nodes {
		names = append(names, n.Name)
	}
	return names
}

func node(t *testing.T, p *ir.Pipeline, name string) *ir.Node {
	t.Helper()
	for _, n := range p.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %q in %v", name, nodeNames(p))
	return nil
}

// checkIndexes checks that the nodes are numbered by their place and that
// every edge comes from an earlier node.
func checkIndexes(t *testing.T, p *ir.Pipeline) {
	t.Helper()
	for i, n := range p.Nodes {
		if n.ID != i {
			t.Errorf("node %q at index %d has ID %d", n.Name, i, n.ID)
		}
		for _, e := range n.Inputs {
			if e.From < 0 || e.From >= i {
				t.Errorf("node %q (%d) reads from node %d: not topologically ordered", n.Name, i, e.From)
			}
		}
	}
}

func TestResolvePartitioning(t *testing.T) {
	p, _ := resolveWarned(t, "partition")
	checkIndexes(t, p)
	if p.Parallelism != 2 {
		t.Errorf("pipeline parallelism %d, want 2", p.Parallelism)
	}
	for _, tc := range []struct {
		node, from  string
		parallelism int
		want        ir.Partition
		why         string
	}{
		{"same", "src", 0, ir.Forward, "both use the default"},
		{"wide", "same", 3, ir.Rebalance, "default to 3"},
		{"wide2", "wide", 3, ir.Forward, "3 to 3"},
		{"narrow", "wide2", 0, ir.Forward, "a map without a parallelism of its own runs at its input's, 3"},
		{"explicit", "narrow", 2, ir.Rebalance, "3 (inherited by narrow) to 2"},
		{"counts", "explicit", 2, ir.Hash, "a keyed node, though both have 2"},
		{"after", "counts", 0, ir.Forward, "a map runs at the parallelism of its keyed input, 2"},
		{"inherited", "one", 0, ir.Forward, "a filter runs at its source's parallelism, 1"},
		{"spread", "inherited", 4, ir.Rebalance, "1 (inherited) to 4"},
		{"tally", "spread", 0, ir.Hash, "a keyed node"},
		{"both", "after", 0, ir.Forward, "a union without a parallelism of its own passes each sender's records on in order"},
		{"both", "one", 0, ir.Forward, "the same from a source at 1"},
		{"merged", "after", 2, ir.Forward, "2 (inherited by after) to 2"},
		{"merged", "one", 2, ir.Rebalance, "1 to 2"},
		{"latest", "merged", 0, ir.Hash, "a keyed node"},
		{"out", "counts", 2, ir.Forward, "2 to 2"},
		{"tallies", "tally", 0, ir.Forward, "a sink runs at its input's parallelism, the default"},
		{"all", "both", 0, ir.Forward, "a sink runs at its input's parallelism, the union's default"},
	} {
		n := node(t, p, tc.node)
		if n.Parallelism != tc.parallelism {
			t.Errorf("%s: parallelism %d, want %d (inheriting one is not having one)", tc.node, n.Parallelism, tc.parallelism)
		}
		var e *ir.Edge
		for i := range n.Inputs {
			if p.Nodes[n.Inputs[i].From].Name == tc.from {
				e = &n.Inputs[i]
			}
		}
		if e == nil {
			t.Errorf("%s does not read from %s", tc.node, tc.from)
			continue
		}
		if e.Partition != tc.want {
			t.Errorf("%s <- %s: partition %s, want %s (%s)", tc.node, tc.from, e.Partition, tc.want, tc.why)
		}
		if e.Type == nil || e.Type.Kind != ir.BasicType || e.Type.Name != "int" {
			t.Errorf("%s <- %s: edge type %v, want int", tc.node, tc.from, e.Type)
		}
	}
	if src := node(t, p, "src"); len(src.Inputs) != 0 {
		t.Errorf("source has %d inputs", len(src.Inputs))
	}
}

// TestResolveWarnsReordering checks the warnings of the partition fixture:
// one at the parallelism of every node behind a rebalance edge whose
// records reach an order-sensitive keyed node, none for spread, whose
// records reach only an aggregate that emits once per key.
func TestResolveWarnsReordering(t *testing.T) {
	_, got := resolveWarned(t, "partition")
	want := []string{
		"testdata/partition/pipeline.yaml:18:18: warning: `parallelism: 3` on \"wide\" spreads the records of \"same\" over its subtasks, so reduce \"counts\" may see each key's records in a different order from run to run: drop it to run \"wide\" at the parallelism of \"same\", fused behind it, or key the records before they are spread: a process keyed like \"counts\" in place of \"wide\" keeps each key on one subtask",
		"testdata/partition/pipeline.yaml:29:18: warning: `parallelism: 2` on \"explicit\" spreads the records of \"narrow\" over its subtasks, so reduce \"counts\" may see each key's records in a different order from run to run: drop it to run \"explicit\" at the parallelism of \"narrow\", fused behind it, or key the records before they are spread: a process keyed like \"counts\" in place of \"explicit\" keeps each key on one subtask",
		"testdata/partition/pipeline.yaml:57:18: warning: `parallelism: 2` on \"merged\" spreads the records of \"one\" over its subtasks, so reduce \"latest\" may see each key's records in a different order from run to run: drop it so that \"merged\" passes the records of each input subtask on in order",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestResolveDefaults(t *testing.T) {
	p, _ := resolveWarned(t, "partition")
	for _, n := range p.Nodes {
		wantUID := n.Name
		if n.Name == "counts" {
			wantUID = "counts-v1"
		}
		if n.UID != wantUID {
			t.Errorf("%s: uid %q, want %q", n.Name, n.UID, wantUID)
		}
		wantEmit := ""
		switch {
		case n.Name == "tally":
			wantEmit = "final"
		case n.Kind.Stateful():
			wantEmit = "update" // the default of keyed nodes
		}
		if n.Emit != wantEmit {
			t.Errorf("%s (%s): emit %q, want %q", n.Name, n.Kind, n.Emit, wantEmit)
		}
	}
	if p.MaxParallelism != 128 || p.StateBackend != "memory" {
		t.Errorf("max-parallelism %d, state backend %q; want the defaults 128, memory", p.MaxParallelism, p.StateBackend)
	}
	want := ir.Checkpoint{Mode: "exactly-once", Interval: 10 * time.Second, Timeout: 10 * time.Minute, Retain: 3, Dir: "checkpoints"}
	if p.Checkpoint != want {
		t.Errorf("checkpoint %+v, want the defaults %+v", p.Checkpoint, want)
	}
	wantRestart := ir.Restart{Strategy: "fixed-delay", Attempts: 3, Delay: time.Second, MaxDelay: time.Minute, Multiplier: 2, MaxFailures: 3, Interval: time.Minute}
	if p.Restart != wantRestart {
		t.Errorf("restart %+v, want the defaults %+v", p.Restart, wantRestart)
	}
	counts := node(t, p, "counts")
	if counts.Key == nil || counts.Key.Name != "Key" || counts.Fn == nil || counts.Fn.Name != "Sum" {
		t.Errorf("counts: key %+v, fn %+v; want Key and Sum", counts.Key, counts.Fn)
	}
	if out := node(t, p, "out"); out.Connector != "stdout" || out.Format != "jsonl" || out.Out != nil {
		t.Errorf("out: connector %q format %q out %v; want stdout, jsonl (an int is no string), no output", out.Connector, out.Format, out.Out)
	}
}

func TestResolveOrder(t *testing.T) {
	// Declaration order is kept when the graph allows it.
	partition, _ := resolveWarned(t, "partition")
	if got, want := nodeNames(partition), []string{"src", "one", "same", "wide", "wide2", "narrow", "explicit", "counts", "after", "inherited", "spread", "tally", "both", "merged", "latest", "out", "tallies", "all", "latest-out"}; !slices.Equal(got, want) {
		t.Errorf("partition: order %v, want the declaration order %v", got, want)
	}
	// b is declared before its input a: it moves after it, and nothing
	// else moves.
	p := resolveOK(t, "order")
	checkIndexes(t, p)
	if got, want := nodeNames(p), []string{"src", "a", "b", "c", "out-b", "out-c"}; !slices.Equal(got, want) {
		t.Errorf("order: %v, want %v", got, want)
	}
	b := node(t, p, "b")
	if len(b.Inputs) != 1 || p.Nodes[b.Inputs[0].From].Name != "a" {
		t.Errorf("b's input is not a after sorting: %+v", b.Inputs)
	}
}

// posOf finds the first line of a fixture's file that holds text (the
// whole line, trimmed, when whole is set) and returns the position of text
// as the IR records positions: relative to the module root.
func posOf(t *testing.T, fixture, file, text string, whole bool) ir.Pos {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", fixture, file))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		i := strings.Index(sc.Text(), text)
		if i >= 0 && (!whole || strings.TrimSpace(sc.Text()) == text) {
			return ir.Pos{File: "dsl/testdata/" + fixture + "/" + file, Line: line, Col: i + 1}
		}
	}
	t.Fatalf("%q not found in %s", text, file)
	return ir.Pos{}
}

// funcPos is where the IR places function name: at its name.
func funcPos(t *testing.T, fixture, file, name string) ir.Pos {
	t.Helper()
	p := posOf(t, fixture, file, "func "+name+"(", false)
	p.Col += len("func ")
	return p
}

func TestResolveShapes(t *testing.T) {
	p := resolveOK(t, "shapes")
	checkIndexes(t, p)
	word := &ir.Type{Kind: ir.NamedType, Name: "Word", PkgPath: fixturePkg + "shapes", PkgName: "shapes"}
	for _, tc := range []struct {
		node, fn, shape string
		out             *ir.Type
	}{
		{"gen", "Next", "", ir.StringType},
		{"words", "NextWord", "into", word},
		{"split-emit", "SplitEmit", "emit", word},
		{"split-slice", "SplitSlice", "slice", word},
		{"upper", "Upper", "value", word},
		{"parse", "Parse", "error", &ir.Type{Kind: ir.BasicType, Name: "int"}},
	} {
		n := node(t, p, tc.node)
		if n.Fn == nil {
			t.Errorf("%s: no function", tc.node)
			continue
		}
		if n.Fn.Name != tc.fn || n.Fn.Shape != tc.shape || n.Fn.PkgPath != fixturePkg+"shapes" {
			t.Errorf("%s: fn %s.%s shape %q, want %s shape %q", tc.node, n.Fn.PkgPath, n.Fn.Name, n.Fn.Shape, tc.fn, tc.shape)
		}
		if want := funcPos(t, "shapes", "shapes.go", tc.fn); n.Fn.Pos != want {
			t.Errorf("%s: fn position %+v, want %+v", tc.node, n.Fn.Pos, want)
		}
		if !ir.Identical(n.Out, tc.out) {
			t.Errorf("%s: out %v, want %v", tc.node, n.Out, tc.out)
		}
	}
	if got, want := node(t, p, "split-emit").Fn.Signature, "func(line string, emit func(Word))"; got != want {
		t.Errorf("split-emit signature %q, want %q (user types unqualified)", got, want)
	}
	if got, want := node(t, p, "parse").Fn.Signature, "func(w Word) (int, error)"; got != want {
		t.Errorf("parse signature %q, want %q", got, want)
	}
	// The named type carries its structure, with field positions.
	out := node(t, p, "upper").Out
	st := out.Struct()
	if st == nil || len(st.Fields) != 1 || st.Fields[0].Name != "Text" || !st.Fields[0].Exported {
		t.Fatalf("Word's structure: %+v", out.Underlying)
	}
	if want := posOf(t, "shapes", "shapes.go", "Text string", true); st.Fields[0].Pos != want {
		t.Errorf("Word.Text position %+v, want %+v", st.Fields[0].Pos, want)
	}
	// Sinks pick their format from the type: strings as lines, others as JSON.
	if f := node(t, p, "numbers").Format; f != "jsonl" {
		t.Errorf("numbers (int) format %q, want jsonl", f)
	}
}

func TestResolvePositions(t *testing.T) {
	p := resolveOK(t, "shapes")
	if p.Source != "dsl/testdata/shapes/pipeline.yaml" {
		t.Errorf("Source %q, want the file relative to the module root", p.Source)
	}
	if p.Package != (ir.Package{Path: fixturePkg + "shapes", Name: "shapes"}) {
		t.Errorf("Package %+v", p.Package)
	}
	if !filepath.IsAbs(p.ModuleDir) {
		t.Errorf("ModuleDir %q is not absolute: the program is built there", p.ModuleDir)
	}
	// Every node records where it was declared in the pipeline file.
	for _, n := range p.Nodes {
		want := posOf(t, "shapes", "pipeline.yaml", "- name: "+n.Name, true)
		want.Col += len("- ") // the node's first key
		if n.Pos != want {
			t.Errorf("%s: position %+v, want %+v", n.Name, n.Pos, want)
		}
	}
}

// TestResolveNoAbsolutePaths resolves fixtures given by absolute and by
// relative paths: the IR is the same, and mentions no path of this machine.
func TestResolveNoAbsolutePaths(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shapes", "keys-ok", "partition"} {
		rel := filepath.Join("testdata", name, "pipeline.yaml")
		p, diags := resolveFile(t, filepath.Join(wd, rel))
		if diags.HasErrors() {
			t.Fatalf("%s:\n%s", name, diags.Format(""))
		}
		abs := dumpJSON(t, p)
		for _, bad := range []string{"/work", "/tmp", os.TempDir(), wd, p.ModuleDir, `"/`} {
			if strings.Contains(abs, bad) {
				t.Errorf("%s: the IR contains %q:\n%s", name, bad, abs)
			}
		}
		if !strings.Contains(abs, `"file": "dsl/testdata/`+name+`/`) {
			t.Errorf("%s: the IR has no position relative to the module root:\n%s", name, abs)
		}
		if rel, _ := resolveWarned(t, name); dumpJSON(t, rel) != abs {
			t.Errorf("%s: the IR differs when the pipeline is named by a relative path", name)
		}
	}
}

func TestResolveDeterministic(t *testing.T) {
	for _, name := range []string{"shapes", "keys-ok", "partition", "order"} {
		p1, _ := resolveWarned(t, name)
		p2, _ := resolveWarned(t, name)
		first, second := dumpJSON(t, p1), dumpJSON(t, p2)
		if first != second {
			t.Errorf("%s: two runs of Resolve differ:\n%s\n%s", name, first, second)
		}
	}
}

func dumpJSON(t *testing.T, p *ir.Pipeline) string {
	t.Helper()
	b, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResolveKeyTypes(t *testing.T) {
	p := resolveOK(t, "keys-ok")
	checkIndexes(t, p)
	pair := node(t, p, "by-pair")
	for _, tc := range []struct {
		node string
		key  string
	}{
		{"by-string", "string"},
		{"by-int", "int"},
		{"by-pair", "keys.Pair"},
	} {
		n := node(t, p, tc.node)
		if n.KeyType == nil || n.KeyType.String() != tc.key {
			t.Errorf("%s: key type %v, want %s", tc.node, n.KeyType, tc.key)
		}
		if len(n.Inputs) != 1 || n.Inputs[0].Partition != ir.Hash {
			t.Errorf("%s: inputs %+v, want one hashed", tc.node, n.Inputs)
		}
	}
	if st := pair.KeyType.Struct(); st == nil || len(st.Fields) != 3 {
		t.Errorf("by-pair: key type without its three fields: %+v", pair.KeyType)
	}
	if got := node(t, p, "by-int").Emit; got != "final" {
		t.Errorf("by-int: emit %q, want final as written", got)
	}
	// An aggregate without a result emits its accumulator.
	if pair.Acc == nil || pair.Acc.String() != "keys.Count" || !ir.Identical(pair.Out, pair.Acc) {
		t.Errorf("by-pair: acc %v out %v, want keys.Count for both", pair.Acc, pair.Out)
	}
	if pair.Add == nil || pair.Add.Name != "Add" || pair.Result != nil {
		t.Errorf("by-pair: add %+v result %+v", pair.Add, pair.Result)
	}
}

func TestResolveBadKeys(t *testing.T) {
	p, diags := resolveFile(t, filepath.Join("testdata", "keys-bad", "pipeline.yaml"))
	if p != nil {
		t.Error("Resolve returned an IR for a pipeline with problems")
	}
	file := filepath.Join("testdata", "keys-bad", "pipeline.yaml")
	var got []string
	for _, d := range diags.Items() {
		if d.Pos.File != file {
			t.Errorf("%v: file %q, want %q", d, d.Pos.File, file)
		}
		got = append(got, fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Msg))
	}
	want := []string{
		"10:10: key ByPointer returns *Rec, which cannot be a key: *Rec is a pointer, and pointers hash differently in every run: key by a value",
		"14:10: key ByInterface returns fmt.Stringer, which cannot be a key: fmt.Stringer cannot be hashed the same way in every run: use a string, a number, or a struct of them",
		"18:10: key ByHidden returns Hidden, which cannot be a key: field secret is unexported, so the generated code cannot hash it: export it",
		"22:10: key ByMap returns map[string]int, which cannot be a key: map[string]int is not comparable",
		"26:10: key ByPointerField returns WithPointer, which cannot be a key: field P: *int is a pointer, and pointers hash differently in every run: key by a value",
		"30:10: key ByMapField returns WithMap, which cannot be a key: field M: map[string]int is not comparable",
		// Nothing about "after", which reads from by-map: a bad key
		// does not make the node's output unknown.
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestResolveNoCascade resolves a spec with values of the wrong shape, as
// compile.Check does: each mistake is reported once, by the front end, and
// the nodes after it are checked without more noise.
func TestResolveNoCascade(t *testing.T) {
	path := filepath.Join("testdata", "cascade", "pipeline.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, diags := ParseYAML(path, data)
	p, more := Resolve(spec)
	if p != nil {
		t.Error("Resolve returned an IR for a pipeline with problems")
	}
	diags.Append(more)
	var got []string
	for _, d := range diags.Items() {
		got = append(got, fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Msg))
	}
	want := []string{
		"9:11: path wants a single value, got a list",
		"12:14: generate has no value",
		"15:12: input wants a single value, got a list",
		"19:14: flatmap wants a single value, got a list",
		`22:16: reduce "r" has 2 key functions but takes one: a list of keys is for join, one per input`,
		`28:13: inputs wants a list such as [a, b], got a value ("gen")`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestResolveReadsEverySetting gives every pipeline-wide setting a value it
// does not take: each must be reported, under its key, so that no setting
// of the table is left unread.
func TestResolveReadsEverySetting(t *testing.T) {
	spec := &Spec{File: filepath.Join("testdata", "partition", "pipeline.yaml"), Version: SupportedVersion}
	for _, s := range settings.All(settings.Pipeline) {
		if s.HasValue() && s.Path != "version" {
			spec.set(s.Path, Str{V: "", Pos: diag.Pos{File: spec.File, Line: 1, Col: 1}, Set: true})
		}
	}
	_, diags := Resolve(spec)
	reported := map[string]bool{}
	for _, d := range diags.Items() {
		reported[d.Key] = true
	}
	for _, s := range settings.All(settings.Pipeline) {
		if s.HasValue() && s.Path != "version" && !reported[s.Path] {
			t.Errorf("%s: an empty value is not reported", s.Path)
		}
	}
}

// TestMergeUnusedWarning checks that an aggregate.merge on sliding windows
// that cannot be kept in slices is reported as never called, with the
// reason, and that one whose windows are kept in slices is not.
func TestMergeUnusedWarning(t *testing.T) {
	p, diags := resolveFile(t, filepath.Join("testdata", "sliced", "pipeline.yaml"))
	if diags.HasErrors() || p == nil {
		t.Fatalf("Resolve(sliced):\n%s", diags.Format(""))
	}
	want := map[string]string{
		"late":     "since it has an allowed lateness",
		"uneven":   "since its size 5s is not a multiple of its slide 2s",
		"pointers": "since its accumulator type sliced.Seen holds pointers",
	}
	for _, d := range diags.Items() {
		why, ok := want[d.Node]
		if !ok || d.Severity != diag.Warning || d.Kind != diag.Misplaced || d.Key != "aggregate.merge" ||
			!strings.Contains(d.Msg, "is never called") || !strings.Contains(d.Msg, why) {
			t.Errorf("unexpected diagnostic: %s (node %q, kind %q, key %q)", d.Error(), d.Node, d.Kind, d.Key)
			continue
		}
		delete(want, d.Node)
	}
	for name, why := range want {
		t.Errorf("no warning for %q, whose windows are kept whole %s", name, why)
	}
	if ok, why := p.SlicedWindows(node(t, p, "sliced")); !ok {
		t.Errorf("the windows of \"sliced\" are not kept in slices: %s", why)
	}
}
