package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/runtime/settings"
)

func TestSyntax(t *testing.T) {
	y, d := yamlSyntax{}, directiveSyntax{pipeline: "two"}
	for _, tc := range []struct {
		got, want string
	}{
		{y.Key("checkpoint.interval"), "checkpoint.interval"},
		{d.Key("checkpoint.interval"), "checkpoint.interval="},
		{d.Key("aggregate.result"), "result="},
		{d.Key("window"), "window"},
		{d.Key("name"), "name"},
		{y.Example("key", "KeyFunc"), "`key: KeyFunc`"},
		{d.Example("key", "KeyFunc"), "key=KeyFunc"},
		{y.Example("key", "LeftKey", "RightKey"), "`key: [LeftKey, RightKey]`"},
		{d.Example("key", "LeftKey", "RightKey"), "key=LeftKey,RightKey"},
		{y.Example("window.tumbling", "10s"), "`window: {tumbling: 10s}`"},
		{y.exampleIn("window.every", "SLIDE"), "`every: SLIDE`"},
		{d.exampleIn("window.every", "SLIDE"), "window.every=SLIDE"},
		{y.Example("connector"), "`connector:`"},
		{d.Example("connector"), "connector="},
		{y.Example("join.between", "-5s", "5s"), "`join: {between: [-5s, 5s]}`"},
		{d.Example("join.between", "-5s", "5s"), "between=-5s,5s"},
		{y.addNode(settings.Sink), "a `sinks:` list"},
		{d.addNode(settings.Sink), "//pipegen:sink NAME pipeline=two input=... connector=..."},
		{directiveSyntax{}.addNode(settings.Source), "//pipegen:source NAME connector=..."},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestDirectiveKeys(t *testing.T) {
	want := []string{"parallelism", "max-parallelism",
		"checkpoint.mode", "checkpoint.interval", "checkpoint.timeout", "checkpoint.min-pause", "checkpoint.retain", "checkpoint.dir",
		"restart.strategy", "restart.attempts", "restart.delay", "restart.max-delay", "restart.multiplier", "restart.max-failures", "restart.interval",
		"state.backend"}
	if got := pipelineKeys(); !slices.Equal(got, want) {
		t.Errorf("pipelineKeys() = %v\nwant %v", got, want)
	}
	for _, tc := range []struct {
		scope settings.Scope
		kind  string
		want  []string
	}{
		{settings.Source, "source", []string{"uid", "parallelism", "connector", "timestamps.extract", "timestamps.max-out-of-orderness", "timestamps.idle-timeout", "timestamps.max-drift", "timestamps.align-group"}},
		{settings.Sink, "sink", []string{"uid", "parallelism", "input", "connector"}},
		{settings.Operator, "map", []string{"uid", "parallelism", "input", "inputs", "key",
			"window.tumbling", "window.sliding", "window.every", "window.session", "window.count", "window.count-every", "window.session-gap", "window.time", "trigger.count", "trigger.every", "trigger.time", "trigger.mode", "allowed-lateness", "state-ttl", "emit", "broadcast", "on-timer"}},
		{settings.Operator, "aggregate", []string{"uid", "parallelism", "input", "inputs", "result", "merge", "key",
			"window.tumbling", "window.sliding", "window.every", "window.session", "window.count", "window.count-every", "window.session-gap", "window.time", "trigger.count", "trigger.every", "trigger.time", "trigger.mode", "allowed-lateness", "state-ttl", "emit", "broadcast", "on-timer"}},
	} {
		got, paths := nodeKeys(tc.scope, tc.kind)
		if !slices.Equal(got, tc.want) {
			t.Errorf("nodeKeys(%s, %s) = %v\nwant %v", tc.scope, tc.kind, got, tc.want)
		}
		if tc.kind == "aggregate" && paths["result"] != "aggregate.result" {
			t.Errorf("the path of result= is %q, want aggregate.result", paths["result"])
		}
	}
}

// TestBothFrontEnds writes the same mistakes in YAML and in directives:
// each is reported with the same kind, key and node, and the same message
// but for how it writes keys.
func TestBothFrontEnds(t *testing.T) {
	dir := writePackage(t, map[string]string{
		"p.go": `package p

//pipegen:pipeline p parallelism=0 checkpoint.interval=0s checkpoint.mode=twice state.backend=rocksdb
//pipegen:sink out input=m connector=stdout

// Gen makes strings.
//
//pipegen:source gen connector=generator rate=fast
func Gen(seq uint64) (string, bool) { return "", seq < 3 }

// Upper is a map.
//
//pipegen:map m input=gen emit=final window.tumbling=1s
func Upper(s string) string { return s }
`,
		"pipeline.yaml": `version: 1
name: p
parallelism: 0
checkpoint:
  interval: 0s
  mode: twice
state:
  backend: rocksdb
sources:
  - name: gen
    connector: generator
    generate: Gen
    rate: fast
operators:
  - name: m
    input: gen
    map: Upper
    emit: final
    window: {tumbling: 1s}
sinks:
  - name: out
    input: m
    connector: stdout
`,
	})
	data, err := os.ReadFile(filepath.Join(dir, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, yamlDiags := ParseYAML(filepath.Join(dir, "pipeline.yaml"), data)
	_, more := Resolve(spec)
	yamlDiags.Append(more)
	a, directiveDiags := ParseAnnotations(dir)
	if directiveDiags.Len() > 0 || len(a.Specs) != 1 {
		t.Fatalf("ParseAnnotations: %d specs\n%s", len(a.Specs), directiveDiags.Format(dir))
	}
	_, directiveDiags = a.Resolve(a.Specs[0])

	type problem struct {
		kind diag.Kind
		node string
		yaml string // the message in YAML; in a directive, with each `key` written key=
	}
	want := map[string]problem{
		"parallelism":         {diag.BadValue, "", `parallelism wants a whole number from 1 to 32768, got "0"`},
		"checkpoint.interval": {diag.BadValue, "", "checkpoint.interval must be more than 0: to turn checkpoints off, use `checkpoint: {mode: none}`"},
		"checkpoint.mode":     {diag.BadValue, "", `checkpoint.mode wants exactly-once, at-least-once or none, got "twice"`},
		"state.backend":       {diag.BadValue, "", `state.backend wants memory or pebble, got "rocksdb"`},
		"rate":                {diag.BadValue, "gen", `rate wants a number of at least 0, got "fast"`},
		"emit":                {diag.Misplaced, "m", "emit is for reduce and aggregate"},
		"window":              {diag.Misplaced, "m", "window is for reduce, aggregate and join; a map has no window"},
	}
	directive := strings.NewReplacer(
		"parallelism wants", "parallelism= wants",
		"checkpoint.interval must", "checkpoint.interval= must",
		"`checkpoint: {mode: none}`", "checkpoint.mode=none",
		"checkpoint.mode wants", "checkpoint.mode= wants",
		"state.backend wants", "state.backend= wants",
		"rate wants", "rate= wants",
		"emit is", "emit= is",
	)
	for name, diags := range map[string]*diag.List{"YAML": yamlDiags, "directives": directiveDiags} {
		got := map[string]problem{}
		for _, d := range diags.Items() {
			if d.Key == "" {
				t.Errorf("%s: %v: no key", name, d)
				continue
			}
			got[d.Key] = problem{d.Kind, d.Node, d.Msg}
		}
		for key, w := range want {
			if name == "directives" {
				w.yaml = directive.Replace(w.yaml)
			}
			if got[key] != w {
				t.Errorf("%s, key %s: got %+v\nwant %+v", name, key, got[key], w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d problems, want %d:\n%s", name, len(got), len(want), diags.Format(dir))
		}
	}
}
