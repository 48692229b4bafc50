package config_test

import (
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/config/configtest"
	"github.com/pipegen/pipegen/runtime/settings"
)

func TestConfigSet(t *testing.T) {
	cases := []struct {
		kv    string
		check func(c *config.Config) any // the value the override set
		want  any
	}{
		{"parallelism=4", func(c *config.Config) any { return c.Parallelism }, 4},
		{"max-parallelism=1024", func(c *config.Config) any { return c.MaxParallelism }, 1024},
		{"checkpoint.mode=at-least-once", func(c *config.Config) any { return c.Checkpoint.Mode }, config.AtLeastOnce},
		{"checkpoint.mode=none", func(c *config.Config) any { return c.Checkpoint.Mode }, config.NoCheckpoints},
		{"checkpoint.mode=exactly-once", func(c *config.Config) any { return c.Checkpoint.Mode }, config.ExactlyOnce},
		{"checkpoint.interval=1m30s", func(c *config.Config) any { return c.Checkpoint.Interval }, 90 * time.Second},
		{"checkpoint.timeout=500ms", func(c *config.Config) any { return c.Checkpoint.Timeout }, 500 * time.Millisecond},
		{"checkpoint.min-pause=2s", func(c *config.Config) any { return c.Checkpoint.MinPause }, 2 * time.Second},
		{"checkpoint.retain=10", func(c *config.Config) any { return c.Checkpoint.Retain }, 10},
		{"checkpoint.dir=/tmp/ck=1", func(c *config.Config) any { return c.Checkpoint.Dir }, "/tmp/ck=1"}, // the first = splits
		{"sources.lines.path=big.txt", func(c *config.Config) any { return c.Nodes[0].Options["path"] }, "big.txt"},
		{"sources.lines.on-error=skip", func(c *config.Config) any { return c.Nodes[0].Options["on-error"] }, "skip"},
		{"sources.lines.header=false", func(c *config.Config) any { return c.Nodes[0].Options["header"] }, "false"},
		{"sources.lines.delimiter=;", func(c *config.Config) any { return c.Nodes[0].Options["delimiter"] }, ";"},
		{"sources.gen.rate=2.5", func(c *config.Config) any { return c.Nodes[4].Options["rate"] }, "2.5"},
		{"sinks.out.path=/data/out", func(c *config.Config) any { return c.Nodes[3].Options["path"] }, "/data/out"},
		{"sources.lines.parallelism=3", func(c *config.Config) any { return [2]any{c.Nodes[0].Parallelism, c.Nodes[0].ParallelismSet} }, [2]any{3, true}},
		{"operators.counts.parallelism=5", func(c *config.Config) any { return [2]any{c.Nodes[2].Parallelism, c.Nodes[2].ParallelismSet} }, [2]any{5, true}},
		{"sinks.show.parallelism=1", func(c *config.Config) any { return [2]any{c.Nodes[5].Parallelism, c.Nodes[5].ParallelismSet} }, [2]any{1, true}},
	}
	for _, tc := range cases {
		t.Run(tc.kv, func(t *testing.T) {
			c := configtest.Demo()
			if err := c.Set(tc.kv); err != nil {
				t.Fatalf("Set(%q) = %v", tc.kv, err)
			}
			if got := tc.check(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("after Set(%q): %v, want %v", tc.kv, got, tc.want)
			}
		})
	}
}

func TestConfigSetNodeWithoutOptions(t *testing.T) {
	c := configtest.Demo()
	c.Nodes[3].Options = nil
	if err := c.Set("sinks.out.path=x"); err != nil {
		t.Fatal(err)
	}
	if got := c.Nodes[3].Options["path"]; got != "x" {
		t.Errorf("path = %q, want x", got)
	}
}

func TestConfigSetErrors(t *testing.T) {
	cases := []struct {
		kv string
		// want are substrings of the message; the message always starts by
		// naming the override, which says which key is wrong.
		want []string
	}{
		{"parallelism", []string{`--set "parallelism"`, "write KEY=VALUE", "--set sources.lines.path=big.txt"}},
		{"=4", []string{`--set "=4"`, "write KEY=VALUE"}},
		{"parallelism=0", []string{"from 1 to 32768", `"0"`}},
		{"parallelism=-2", []string{"from 1 to 32768", `"-2"`}},
		{"parallelism=two", []string{"whole number", `"two"`}},
		{"parallelism=", []string{"whole number", `""`}},
		{"max-parallelism=0", []string{"from 1 to 32768"}},
		{"max-parallelism=9223372036854775807", []string{"from 1 to 32768"}},
		{"max-parallelism=1000000000", []string{"from 1 to 32768"}},
		{"max-parallelism=1.5", []string{"whole number", `"1.5"`}},
		{"paralelism=2", []string{`unknown setting "paralelism"`, "parallelism, max-parallelism, checkpoint.mode"}},
		{"checkpoint=1", []string{`unknown setting "checkpoint"`}},
		{"checkpoint.interval.x=1", []string{`unknown setting "checkpoint.interval.x"`}},
		{"checkpoint.mode=exactly_once", []string{"checkpoint.mode wants exactly-once, at-least-once or none", `"exactly_once"`}},
		{"checkpoint.mode=", []string{"checkpoint.mode wants"}},
		{"checkpoint.interval=0", []string{"checkpoint.interval must be more than 0", "checkpoint.mode=none"}},
		{"checkpoint.timeout=0", []string{"checkpoint.timeout must be more than 0"}},
		{"checkpoint.interval=10", []string{`checkpoint.interval wants a duration such as 500ms, 10s, 5m or 1h, got "10"`}},
		{"checkpoint.interval=-5s", []string{`checkpoint.interval must not be negative`}},
		{"checkpoint.timeout=soon", []string{`checkpoint.timeout wants a duration`, `got "soon"`}},
		{"checkpoint.min-pause=-1s", []string{"must not be negative"}},
		{"checkpoint.retain=0", []string{"at least 1"}},
		{"checkpoint.retain=all", []string{"whole number", `"all"`}},
		{"checkpoint.dir=", []string{"checkpoint.dir must not be empty"}},
		{"checkpoint.intervall=5s", []string{`unknown setting "checkpoint.intervall"`, "checkpoint.mode, checkpoint.interval, checkpoint.timeout, checkpoint.min-pause, checkpoint.retain, checkpoint.dir"}},
		{"state.backend=pebble", []string{"state.backend is fixed when the pipeline is compiled", "demo/pipeline.yaml", "rebuild"}},
		{"sources.nope.path=x", []string{`no source named "nope"`, "(there are: lines, gen)"}},
		{"sinks.nope.path=x", []string{`no sink named "nope"`, "(there are: out, show)"}},
		{"operators.nope.parallelism=2", []string{`no operator named "nope"`, "(there are: words, counts)"}},
		{"operators.lines.parallelism=2", []string{`no operator named "lines"`}}, // a source, not an operator
		{"sources.lines.pth=x", []string{`the file source "lines" has no option "pth"`, "(it takes: path, format, type, on-error, header, delimiter, strict)"}},
		{"sinks.show.path=x", []string{`the stdout sink "show" has no option "path"`, "(it takes: format, delimiter)"}},
		{"sources.lines.format=csv", []string{"format is fixed when the pipeline is compiled", "demo/pipeline.yaml"}},
		{"sources.gen.generate=Other", []string{"generate is fixed when the pipeline is compiled"}},
		{"sinks.out.format=jsonl", []string{"format is fixed when the pipeline is compiled"}},
		{"sources.lines.on-error=ignore", []string{"on-error wants fail, skip or dead-letter, got \"ignore\"", `"ignore"`}},
		{"sources.lines.header=yes", []string{"header wants true or false", `"yes"`}},
		{"sources.gen.rate=fast", []string{"rate wants a number of at least 0", `"fast"`}},
		{"sources.gen.rate=-1", []string{"rate wants a number of at least 0"}},
		{"sources.lines.path=", []string{"path must not be empty"}},
		{"operators.counts.key=Other", []string{`operator "counts" has no option "key"`, "only its parallelism"}},
		{"operators.counts.parallelism=0", []string{"from 1 to 32768"}},
		{"sources.lines.parallelism=x", []string{"whole number"}},
		{"operators.words.parallelism=4", []string{"words runs fused with lines", "set sources.lines.parallelism instead"}},
		{"sinks.out.parallelism=4", []string{"out runs fused with counts", "set operators.counts.parallelism instead"}},
		{"sources.lines=x", []string{`unknown setting "sources.lines"`}},
		{"sources.lines.path.x=1", []string{`the file source "lines" has no option "path.x"`}},
	}
	for _, tc := range cases {
		t.Run(tc.kv, func(t *testing.T) {
			c := configtest.Demo()
			before := c.Clone()
			err := c.Set(tc.kv)
			if err == nil {
				t.Fatalf("Set(%q) = nil, want an error", tc.kv)
			}
			msg := err.Error()
			key, _, _ := strings.Cut(tc.kv, "=")
			if !strings.Contains(msg, key) {
				t.Errorf("message %q does not name the key %q", msg, key)
			}
			if key != "" && strings.Contains(tc.kv, "=") && !strings.HasPrefix(msg, "--set "+tc.kv+": ") {
				t.Errorf("message %q does not start with the override --set %s", msg, tc.kv)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			if msg != strings.TrimSpace(msg) || strings.HasSuffix(msg, ".") {
				t.Errorf("message %q: no trailing period or space", msg)
			}
			// A refused override changes nothing.
			if !reflect.DeepEqual(c, before) {
				t.Errorf("Set(%q) failed but changed the settings:\n got %+v\nwant %+v", tc.kv, c, before)
			}
		})
	}
}

func TestConfigCloneIsDeep(t *testing.T) {
	c := configtest.Demo()
	cp := c.Clone()
	if !reflect.DeepEqual(c, cp) {
		t.Fatal("Clone differs from the original")
	}
	for _, kv := range []string{"parallelism=7", "sources.lines.path=other", "operators.counts.parallelism=3", "checkpoint.dir=elsewhere"} {
		if err := cp.Set(kv); err != nil {
			t.Fatal(err)
		}
	}
	if err := cp.Resolve(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, configtest.Demo()) {
		t.Errorf("changing a clone changed the original: %+v", c)
	}
}

func TestConfigResolve(t *testing.T) {
	c := configtest.Demo()
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	par := map[string]int{}
	for _, n := range c.Nodes {
		par[n.Name] = n.Parallelism
	}
	want := map[string]int{
		"lines":  2, // the default
		"words":  2, // fused with lines
		"counts": 2,
		"out":    2, // fused with counts
		"gen":    1, // its own
		"show":   2,
	}
	if !maps.Equal(par, want) {
		t.Errorf("parallelism %v, want %v", par, want)
	}

	// Defaults come from the catalog; what the pipeline set stays.
	lines := c.Nodes[0].Options
	wantLines := map[string]string{"path": "input.txt", "format": "lines", "on-error": "fail", "header": "true", "delimiter": ",", "strict": "false"}
	if !maps.Equal(lines, wantLines) {
		t.Errorf("lines options %v, want %v", lines, wantLines)
	}
	conn := settings.LookupConnector(settings.Source, "file")
	for _, o := range conn.Options {
		if o.Default != "" && lines[o.Path] != o.Default && o.Path != "path" {
			t.Errorf("option %s = %q, want the table's default %q", o.Path, lines[o.Path], o.Default)
		}
	}
	if got := c.Nodes[4].Option("rate"); got != "0" {
		t.Errorf("gen rate %q, want the default 0", got)
	}
	if got := c.Nodes[4].Option("generate"); got != "Gen" {
		t.Errorf("gen generate %q, want Gen", got)
	}
	if c.Nodes[5].Options == nil {
		t.Error("show has no options map after resolve")
	}
	if c.Nodes[1].Options != nil {
		t.Errorf("operator words got connector options %v", c.Nodes[1].Options)
	}
}

func TestConfigResolveKeepsOverrides(t *testing.T) {
	c := configtest.Demo()
	for _, kv := range []string{"parallelism=6", "sources.lines.parallelism=3", "operators.counts.parallelism=4", "sources.lines.on-error=skip", "sources.lines.delimiter=|"} {
		if err := c.Set(kv); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	par := map[string]int{}
	for _, n := range c.Nodes {
		par[n.Name] = n.Parallelism
	}
	want := map[string]int{"lines": 3, "words": 3, "counts": 4, "out": 4, "gen": 1, "show": 6}
	if !maps.Equal(par, want) {
		t.Errorf("parallelism %v, want %v", par, want)
	}
	if got := c.Nodes[0].Option("on-error"); got != "skip" {
		t.Errorf("on-error %q, want the override skip", got)
	}
	if got := c.Nodes[0].Option("delimiter"); got != "|" {
		t.Errorf("delimiter %q, want the override |", got)
	}
}

func TestConfigResolveMaxParallelism(t *testing.T) {
	// A keyed operator cannot have more subtasks than key groups.
	c := configtest.Demo()
	if err := c.Set("operators.counts.parallelism=9"); err != nil {
		t.Fatal(err)
	}
	err := c.Resolve()
	if err == nil || !strings.Contains(err.Error(), `operator "counts" has parallelism 9 but max-parallelism is 8`) {
		t.Fatalf("resolve = %v, want counts named with 9 and 8", err)
	}

	// The same through the default parallelism.
	c = configtest.Demo()
	c.Parallelism = 9
	if err := c.Resolve(); err == nil || !strings.Contains(err.Error(), `"counts"`) {
		t.Fatalf("resolve = %v, want an error naming counts", err)
	}

	// Stateless nodes may have more subtasks than key groups.
	c = configtest.Demo()
	for _, kv := range []string{"sources.lines.parallelism=20", "sources.gen.parallelism=20", "sinks.show.parallelism=20"} {
		if err := c.Set(kv); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Resolve(); err != nil {
		t.Fatalf("resolve = %v, want stateless nodes above max-parallelism accepted", err)
	}
	if c.Nodes[1].Parallelism != 20 {
		t.Errorf("words (fused with lines) has parallelism %d, want 20", c.Nodes[1].Parallelism)
	}

	// Every keyed kind is checked.
	for _, kind := range []string{"reduce", "aggregate", "process", "join"} {
		c := &config.Config{Name: "k", Parallelism: 4, MaxParallelism: 2, Nodes: []config.NodeConfig{{Name: "op", Kind: kind, Section: "operators"}}}
		if err := c.Resolve(); err == nil {
			t.Errorf("%s with parallelism 4 > max-parallelism 2 accepted", kind)
		}
	}
	for _, kind := range []string{"source", "map", "filter", "flatmap", "union", "sink"} {
		c := &config.Config{Name: "k", Parallelism: 4, MaxParallelism: 2, Nodes: []config.NodeConfig{{Name: "op", Kind: kind, Section: "operators"}}}
		if err := c.Resolve(); err != nil {
			t.Errorf("%s with parallelism 4 > max-parallelism 2: %v", kind, err)
		}
	}
}

// TestEverySettingHasAField: every pipeline-wide setting that --set can
// change, and state.backend, is held by a field of Config (its setting
// tag): the table and the struct cannot drift apart.
func TestEverySettingHasAField(t *testing.T) {
	c := configtest.Demo()
	for _, s := range append(settings.Overridable(), settings.Lookup("state.backend")) {
		f, ok := c.Field(s.Path)
		if !ok {
			t.Errorf("no field of Config holds %s", s.Path)
			continue
		}
		if d := s.DefaultValue(); d != nil && !reflect.TypeOf(d).ConvertibleTo(f.Type()) {
			t.Errorf("%s: field of type %s, the table parses %T", s.Path, f.Type(), d)
		}
	}
}

// Resolve gives every source with a maximum drift its place in its
// alignment group: the subtasks of a group's sources one after the other,
// at their parallelism as resolved; a source without a group is alone.
func TestConfigResolveAlignGroups(t *testing.T) {
	src := func(name string, p int, drift time.Duration, group string) config.NodeConfig {
		return config.NodeConfig{Name: name, Kind: "source", Section: "sources", Parallelism: p, ParallelismSet: p > 0,
			Watermark: config.WatermarkConfig{MaxDrift: drift, AlignGroup: group}}
	}
	c := &config.Config{Parallelism: 4, MaxParallelism: 128, Nodes: []config.NodeConfig{
		src("a", 2, time.Second, "g"),
		src("alone", 0, time.Second, ""), // the default parallelism, 4
		src("b", 3, time.Minute, "g"),
		src("untimed", 2, 0, ""),
		src("c", 1, time.Second, "h"),
	}}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"a": {0, 5}, "alone": {0, 4}, "b": {2, 5}, "untimed": {0, 0}, "c": {0, 1}}
	for _, n := range c.Nodes {
		if got := [2]int{n.Watermark.AlignSlot, n.Watermark.AlignSize}; got != want[n.Name] {
			t.Errorf("%s: slot and size %v, want %v", n.Name, got, want[n.Name])
		}
	}
	// Resolved again at another parallelism (a rescaled restart), the
	// places follow.
	c.Nodes[0].Parallelism = 1
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if w := c.Nodes[2].Watermark; w.AlignSlot != 1 || w.AlignSize != 4 {
		t.Errorf("b after a went to 1 subtask: slot and size %d, %d, want 1, 4", w.AlignSlot, w.AlignSize)
	}
}
