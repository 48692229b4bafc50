package dsl

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/runtime/catalog"
)

// SupportedVersion is the pipeline format version this compiler reads.
const SupportedVersion = 1

// ParseYAML reads a pipeline file. It reports every structural problem it
// finds (malformed YAML, unknown or duplicate keys, values of the wrong
// shape), each with its position; the spec is usable only when the list is
// empty.
func ParseYAML(file string, data []byte) (*Spec, *diag.List) {
	p := &yamlParser{file: file, diags: &diag.List{}}
	spec := p.parse(data)
	return spec, p.diags
}

type yamlParser struct {
	file  string
	diags *diag.List
}

func (p *yamlParser) pos(n *yaml.Node) diag.Pos {
	return diag.Pos{File: p.file, Line: n.Line, Col: n.Column}
}

func (p *yamlParser) errorf(n *yaml.Node, format string, args ...any) {
	p.diags.Add(p.pos(n), format, args...)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *yamlParser) parse(data []byte) *Spec {
	spec := &Spec{File: p.file}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		// yaml.v3 reports "yaml: line N: message"; keep the line.
		pos := diag.Pos{File: p.file, Line: 1, Col: 1}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			pos.Line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		if err.Error() == "EOF" {
			msg = "the file is empty: a pipeline starts with `version: 1`"
		}
		p.diags.Add(pos, "malformed YAML: %s", msg)
		return spec
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "a pipeline is a mapping of keys (version, name, sources, ...), not a %s", kindName(root))
		return spec
	}

	// version is read first: a file of another version is not checked
	// against this version's keys.
	vkey, vval := lookup(root, "version")
	if vval == nil {
		p.errorf(root, "missing version: start the file with `version: %d`", SupportedVersion)
		return spec
	}
	if vval.Kind != yaml.ScalarNode {
		p.errorf(vval, "version wants a number, got a %s", kindName(vval))
		return spec
	}
	v, err := strconv.Atoi(vval.Value)
	if err != nil || v != SupportedVersion {
		p.errorf(vval, "unsupported pipeline version %q: this pipegen reads version %d", vval.Value, SupportedVersion)
		return spec
	}
	_ = vkey
	spec.Version = v

	p.mapping(root, "pipeline", func(key string, k, val *yaml.Node) bool {
		switch key {
		case "version":
		case "name":
			spec.Name = p.str(k, val)
		case "package":
			spec.Package = p.str(k, val)
		case "parallelism":
			spec.Parallelism = p.positive(k, val)
		case "max-parallelism":
			spec.MaxParallelism = p.positive(k, val)
		case "checkpoint":
			p.checkpoint(&spec.Checkpoint, k, val)
		case "restart":
			p.restart(&spec.Restart, k, val)
		case "state":
			p.mapping(val, "state", func(key string, k, val *yaml.Node) bool {
				if key != "backend" {
					return false
				}
				spec.StateBackend = p.str(k, val)
				return true
			}, "backend")
		case "sources":
			spec.Sources = p.nodes(val, Sources)
		case "operators":
			spec.Operators = p.nodes(val, Operators)
		case "sinks":
			spec.Sinks = p.nodes(val, Sinks)
		default:
			return false
		}
		return true
	}, "version", "name", "package", "parallelism", "max-parallelism", "checkpoint", "restart", "state", "sources", "operators", "sinks")

	// A name without a value is reported where it is written.
	if k, _ := lookup(root, "name"); k == nil {
		p.errorf(root, "missing name: add `name: my-pipeline` (lowercase letters, digits and dashes)")
	}
	return spec
}

func (p *yamlParser) checkpoint(c *CheckpointSpec, k, val *yaml.Node) {
	c.Pos = p.pos(k)
	p.mapping(val, "checkpoint", func(key string, k, val *yaml.Node) bool {
		switch key {
		case "mode":
			c.Mode = p.str(k, val)
		case "interval":
			c.Interval = p.str(k, val)
		case "timeout":
			c.Timeout = p.str(k, val)
		case "min-pause":
			c.MinPause = p.str(k, val)
		case "retain":
			c.Retain = p.positive(k, val)
		case "dir":
			c.Dir = p.str(k, val)
		default:
			return false
		}
		return true
	}, "mode", "interval", "timeout", "min-pause", "retain", "dir")
}

func (p *yamlParser) restart(c *RestartSpec, k, val *yaml.Node) {
	c.Pos = p.pos(k)
	p.mapping(val, "restart", func(key string, k, val *yaml.Node) bool {
		switch key {
		case "strategy":
			c.Strategy = p.str(k, val)
		case "attempts":
			c.Attempts = p.str(k, val)
		case "delay":
			c.Delay = p.str(k, val)
		case "max-delay":
			c.MaxDelay = p.str(k, val)
		case "multiplier":
			c.Multiplier = p.str(k, val)
		case "max-failures":
			c.MaxFailures = p.str(k, val)
		case "interval":
			c.Interval = p.str(k, val)
		default:
			return false
		}
		return true
	}, "strategy", "attempts", "delay", "max-delay", "multiplier", "max-failures", "interval")
}

// operatorKinds are the keys that give an operator its kind.
var operatorKinds = []string{"map", "filter", "flatmap", "reduce", "aggregate", "process", "join", "union"}

func (p *yamlParser) nodes(val *yaml.Node, section Section) []*NodeSpec {
	if val.Kind != yaml.SequenceNode {
		p.errorf(val, "%s wants a list of %s (each item starting with `- name:`), got a %s", section, section, kindName(val))
		return nil
	}
	var out []*NodeSpec
	for _, item := range val.Content {
		if item.Kind != yaml.MappingNode {
			p.errorf(item, "each of %s is a mapping starting with `name:`, got a %s", section, kindName(item))
			continue
		}
		out = append(out, p.node(item, section))
	}
	return out
}

func (p *yamlParser) node(m *yaml.Node, section Section) *NodeSpec {
	n := &NodeSpec{Section: section, Pos: p.pos(m)}
	if section != Operators {
		n.Kind = Str{V: section.Singular(), Pos: n.Pos}
	}
	common := []string{"name", "uid", "parallelism"}
	var known []string
	switch section {
	case Sources:
		known = append(common, "connector", "timestamps")
	case Operators:
		known = append(append(common, "input", "inputs"), operatorKinds...)
		known = append(known, "key", "window", "allowed-lateness", "emit", "on-timer")
	case Sinks:
		known = append(common, "input", "connector")
	}
	// Connector options are checked once the connector is known; collect
	// the keys nobody else claims.
	var extra []*yaml.Node
	p.mapping(m, section.Singular(), func(key string, k, val *yaml.Node) bool {
		switch key {
		case "name":
			n.Name = p.str(k, val)
		case "uid":
			n.UID = p.str(k, val)
		case "parallelism":
			n.Parallelism = p.positive(k, val)
		case "input":
			if section == Sources {
				return false
			}
			n.Inputs = append(n.Inputs, p.str(k, val))
		case "inputs":
			if section != Operators {
				return false
			}
			if val.Kind != yaml.SequenceNode {
				// Reported by strs; an unset input keeps the resolver
				// from reporting the node as having none.
				p.strs(k, val)
				n.Inputs = append(n.Inputs, Str{Pos: p.pos(val)})
				return true
			}
			n.Inputs = append(n.Inputs, p.strs(k, val)...)
		case "connector":
			if section == Operators {
				return false
			}
			n.Connector = p.str(k, val)
		case "timestamps":
			if section != Sources {
				return false
			}
			n.Timestamps = p.timestamps(k, val)
		case "key":
			if section != Operators {
				return false
			}
			if val.Kind == yaml.SequenceNode {
				n.Keys = p.strs(k, val)
			} else {
				n.Keys = []Str{p.str(k, val)}
			}
		case "window":
			if section != Operators {
				return false
			}
			n.Window = p.window(k, val)
		case "allowed-lateness":
			if section != Operators {
				return false
			}
			n.AllowedLateness = p.str(k, val)
		case "emit":
			if section != Operators {
				return false
			}
			n.Emit = p.str(k, val)
		case "on-timer":
			if section != Operators {
				return false
			}
			n.OnTimer = p.str(k, val)
		case "map", "filter", "flatmap", "reduce", "aggregate", "process", "join", "union":
			if section != Operators {
				return false
			}
			if n.Kind.Set {
				p.errorf(k, "operator has two kinds, %s and %s: an operator does one thing, split it into two", n.Kind.V, key)
				return true
			}
			n.Kind = Str{V: key, Pos: p.pos(k), Set: true}
			p.kindValue(n, key, k, val)
		default:
			if section == Operators {
				return false
			}
			extra = append(extra, k, val)
		}
		return true
	}, known...)

	if k, _ := lookup(m, "name"); k == nil {
		p.errorf(m, "%s without a name: add `name:`", section.Singular())
	}
	if section == Operators && !n.Kind.Set {
		p.errorf(m, "operator %q has no kind: give it one of %s", n.Name.V, strings.Join(operatorKinds, ", "))
	}
	if section != Operators {
		p.connectorOptions(n, section, extra, known)
	}
	return n
}

// kindValue reads the value of an operator's kind key.
func (p *yamlParser) kindValue(n *NodeSpec, kind string, k, val *yaml.Node) {
	switch kind {
	case "aggregate":
		p.mapping(val, "aggregate", func(key string, k, val *yaml.Node) bool {
			switch key {
			case "add":
				n.Add = p.str(k, val)
			case "result":
				n.Result = p.str(k, val)
			case "merge":
				n.Merge = p.str(k, val)
			default:
				return false
			}
			return true
		}, "add", "result", "merge")
		if val.Kind == yaml.MappingNode && !n.Add.Set {
			p.errorf(val, "aggregate needs `add: AddFunc` (func(acc *A, in In))")
		}
	case "join":
		p.mapping(val, "join", func(key string, k, val *yaml.Node) bool {
			switch key {
			case "apply":
				n.Apply = p.str(k, val)
			case "between":
				n.Between = p.strs(k, val)
			default:
				return false
			}
			return true
		}, "apply", "between")
		if val.Kind == yaml.MappingNode && !n.Apply.Set {
			p.errorf(val, "join needs `apply: JoinFunc` (func(L, R) Out)")
		}
	case "union":
		if val.Kind != yaml.ScalarNode || val.Value != "true" {
			p.errorf(val, "write `union: true`; the inputs to merge go under `inputs:`")
		}
	default:
		n.Fn = p.str(k, val)
	}
}

func (p *yamlParser) connectorOptions(n *NodeSpec, section Section, extra []*yaml.Node, known []string) {
	role := catalog.SourceRole
	if section == Sinks {
		role = catalog.SinkRole
	}
	var conn *catalog.Connector
	if n.Connector.Set {
		conn = catalog.Lookup(role, n.Connector.V)
		if conn == nil {
			p.diags.Add(n.Connector.Pos, "unknown %s connector %q: use one of %s", role, n.Connector.V, strings.Join(catalog.Names(role), ", "))
		}
	} else if n.Name.Set || len(extra) > 0 {
		p.diags.Add(n.Pos, "%s %q has no connector: add `connector:` (one of %s)", role, n.Name.V, strings.Join(catalog.Names(role), ", "))
	}
	for i := 0; i < len(extra); i += 2 {
		k, val := extra[i], extra[i+1]
		if conn == nil {
			continue // already reported
		}
		if conn.Option(k.Value) == nil {
			all := append(append([]string{}, known...), conn.OptionNames()...)
			p.errorf(k, "unknown key %q in %s %q%s (the %s %s takes %s)", k.Value, role, n.Name.V, suggest(k.Value, all), conn.Name, role, strings.Join(conn.OptionNames(), ", "))
			continue
		}
		n.Options = append(n.Options, OptionSpec{Name: Str{V: k.Value, Pos: p.pos(k), Set: true}, Value: p.str(k, val)})
	}
}

func (p *yamlParser) window(k, val *yaml.Node) *WindowSpec {
	w := &WindowSpec{Pos: p.pos(k)}
	p.mapping(val, "window", func(key string, k, val *yaml.Node) bool {
		switch key {
		case "tumbling":
			w.Tumbling = p.str(k, val)
		case "sliding":
			w.Sliding = p.str(k, val)
		case "every":
			w.Every = p.str(k, val)
		case "session":
			w.Session = p.str(k, val)
		case "time":
			w.Time = p.str(k, val)
		default:
			return false
		}
		return true
	}, "tumbling", "sliding", "every", "session", "time")
	return w
}

func (p *yamlParser) timestamps(k, val *yaml.Node) *TimestampsSpec {
	t := &TimestampsSpec{Pos: p.pos(k)}
	p.mapping(val, "timestamps", func(key string, k, val *yaml.Node) bool {
		switch key {
		case "extract":
			t.Extract = p.str(k, val)
		case "max-out-of-orderness":
			t.MaxOutOfOrderness = p.str(k, val)
		case "idle-timeout":
			t.IdleTimeout = p.str(k, val)
		default:
			return false
		}
		return true
	}, "extract", "max-out-of-orderness", "idle-timeout")
	return t
}

// mapping walks the keys of a mapping node. visit returns false for a key
// it does not know; that key is reported with the known keys and a
// suggestion. Duplicate keys are reported too.
func (p *yamlParser) mapping(m *yaml.Node, what string, visit func(key string, k, val *yaml.Node) bool, known ...string) {
	if m.Kind != yaml.MappingNode {
		p.errorf(m, "%s wants a mapping of keys (%s), got a %s", what, strings.Join(known, ", "), kindName(m))
		return
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, val := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "keys in %s must be plain words, got a %s", what, kindName(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			p.errorf(k, "duplicate key %q in %s (first at line %d)", k.Value, what, prev.Line)
			continue
		}
		seen[k.Value] = k
		if !visit(k.Value, k, val) {
			p.errorf(k, "unknown key %q in %s%s (known keys: %s)", k.Value, what, suggest(k.Value, known), strings.Join(known, ", "))
		}
	}
}

func (p *yamlParser) str(k, val *yaml.Node) Str {
	if val.Kind != yaml.ScalarNode {
		p.errorf(val, "%s wants a single value, got a %s", k.Value, kindName(val))
		return Str{Pos: p.pos(val)}
	}
	if val.Tag == "!!null" {
		p.errorf(val, "%s has no value", k.Value)
		return Str{Pos: p.pos(val)}
	}
	return Str{V: val.Value, Pos: p.pos(val), Set: true}
}

func (p *yamlParser) strs(k, val *yaml.Node) []Str {
	if val.Kind != yaml.SequenceNode {
		p.errorf(val, "%s wants a list such as [a, b], got a %s", k.Value, kindName(val))
		return nil
	}
	var out []Str
	for _, item := range val.Content {
		out = append(out, p.str(k, item))
	}
	return out
}

func (p *yamlParser) positive(k, val *yaml.Node) Int {
	s := p.str(k, val)
	if !s.Set {
		return Int{Pos: s.Pos}
	}
	v, err := strconv.Atoi(s.V)
	if err != nil || v < 1 {
		p.errorf(val, "%s wants a whole number of at least 1, got %q", k.Value, s.V)
		return Int{Pos: s.Pos}
	}
	return Int{V: v, Pos: s.Pos, Set: true}
}

// lookup finds a key of a mapping node.
func lookup(m *yaml.Node, key string) (k, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return fmt.Sprintf("value (%q)", n.Value)
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}
