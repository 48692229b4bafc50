package dsl

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/runtime/settings"
)

// SupportedVersion is the pipeline format version this compiler reads.
const SupportedVersion = 1

// ParseYAML reads a pipeline file. It reports every structural problem it
// finds (malformed YAML, unknown or duplicate keys, values of the wrong
// shape), each with its position; the spec is usable only when the list is
// empty. Values are checked by Resolve, against the settings table.
func ParseYAML(file string, data []byte) (*Spec, *diag.List) {
	p := &yamlParser{file: file, reporter: reporter{diags: &diag.List{}, syntax: yamlSyntax{}}}
	spec := p.read(data)
	return spec, p.diags
}

type yamlParser struct {
	reporter
	file string
}

func (p *yamlParser) pos(n *yaml.Node) diag.Pos {
	return diag.Pos{File: p.file, Line: n.Line, Col: n.Column}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError returns the line, column and message of yaml.v3's error err
// about data. yaml.v3 says "yaml: line N: message" for most problems, but
// N is the problem's line only for the scanner's: the parser's name the
// line before the mapping or list that the problem is in (or the
// problem's 0-based line when that is the first); the reader's (control
// characters, bad UTF-8) and unknown anchors have no line. So bad
// characters are found in data, and any other problem at the first line,
// not before N, through which data fails with the same message: where
// reading the file goes wrong. The column is known for a bad character
// and an unknown anchor; otherwise it is 1.
func syntaxError(data []byte, err error) (line, col int, msg string) {
	msg, from := strings.TrimPrefix(err.Error(), "yaml: "), 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		msg, from = m[2], max(n, 1)
	}
	if strings.HasPrefix(msg, "control characters") || strings.Contains(msg, "UTF-8") {
		if line, col, r, ok := badChar(data); ok {
			if r >= 0 {
				msg += fmt.Sprintf(" (%U)", r)
			}
			return line, col, msg
		}
	}
	// Line i (1-based) ends at ends[i-1].
	var ends []int
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] < len(data) {
		ends = append(ends, len(data))
	}
	// failsThrough reports whether the lines up to n fail with msg.
	failsThrough := func(n int) bool {
		var doc yaml.Node
		err := yaml.NewDecoder(bytes.NewReader(data[:ends[n-1]])).Decode(&doc)
		if err == nil {
			return false
		}
		m := strings.TrimPrefix(err.Error(), "yaml: ")
		if sub := yamlLine.FindStringSubmatch(err.Error()); sub != nil {
			m = sub[2]
		}
		return m == msg
	}
	from = min(from, len(ends))
	if from > 1 && failsThrough(1) {
		// yaml.v3 gives the problem's line, not the line where what it
		// is in starts, when that is the first: an unclosed quote there.
		from = 1
	}
	line = from + sort.Search(len(ends)-from, func(i int) bool { return failsThrough(from + i) })
	col = 1
	if name, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		name = strings.TrimSuffix(name, "' referenced")
		start := 0
		if line > 1 {
			start = ends[line-2]
		}
		if i := bytes.Index(data[start:ends[line-1]], []byte("*"+name)); i >= 0 {
			col = utf8.RuneCount(data[start:start+i]) + 1
		}
	}
	return line, col, msg
}

// badChar finds the first character of data that YAML does not allow:
// bytes that are not UTF-8 (r is -1) and control characters.
func badChar(data []byte) (line, col int, r rune, ok bool) {
	line, col = 1, 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == utf8.RuneError && size <= 1:
			return line, col, -1, true
		case !yamlPrintable(r):
			return line, col, r, true
		case r == '\n':
			line, col = line+1, 0
		}
		data = data[size:]
		col++
	}
	return 0, 0, 0, false
}

// yamlPrintable reports whether YAML 1.2 allows r in a file (its
// c-printable production, which yaml.v3 checks).
func yamlPrintable(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7e) || r == 0x85 ||
		(r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff)
}

func (p *yamlParser) read(data []byte) *Spec {
	spec := &Spec{File: p.file, Pos: diag.Pos{File: p.file, Line: 1, Col: 1}, syntax: p.syntax}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		pos, msg := spec.Pos, "the file is empty: a pipeline starts with `version: 1`"
		if err.Error() != "EOF" {
			pos.Line, pos.Col, msg = syntaxError(data, err)
		}
		p.report(pos, diag.Syntax, "malformed YAML: %s", msg)
		return spec
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		p.report(p.pos(root), diag.Syntax, "a pipeline is a mapping of keys (version, name, sources, ...), not %s", kindName(root))
		return spec
	}

	// version is read first: a file of another version is not checked
	// against this version's keys.
	_, vval := lookup(root, "version")
	if vval == nil {
		p.report(p.pos(root), diag.Missing, "missing version: start the file with %v", ex("version", strconv.Itoa(SupportedVersion)))
		return spec
	}
	if vval.Kind != yaml.ScalarNode {
		p.report(p.pos(vval), diag.BadValue, "%v wants a number, got %s", keyRef("version"), kindName(vval))
		return spec
	}
	v, err := strconv.Atoi(vval.Value)
	if err != nil || v != SupportedVersion {
		p.report(p.pos(vval), diag.BadValue, "unsupported pipeline version %q: this pipegen reads version %d", vval.Value, SupportedVersion)
		return spec
	}
	spec.Version = v

	p.section(root, "pipeline", settings.Pipeline, "", func(s *settings.Setting, k, val *yaml.Node) {
		switch {
		case s.Path == "version":
		case s.Kind == settings.Nodes:
			nodes := p.nodes(s, val)
			switch s.Nodes {
			case settings.Source:
				spec.Sources = nodes
			case settings.Operator:
				spec.Operators = nodes
			default:
				spec.Sinks = nodes
			}
		default:
			spec.set(s.Path, p.str(s.Path, val))
		}
	})

	// A name without a value is reported where it is written.
	if k, _ := lookup(root, "name"); k == nil {
		p.report(p.pos(root), diag.Missing, "missing name: add %v (lowercase letters, digits and dashes)", ex("name", "my-pipeline"))
	}
	return spec
}

// section walks a mapping of keys of the settings table, the keys of scope
// inside prefix ("" for the top): unknown keys are reported, sections are
// walked in turn, and visit gets every other key. what names the mapping in
// messages.
func (p *yamlParser) section(m *yaml.Node, what string, scope settings.Scope, prefix string, visit func(s *settings.Setting, k, val *yaml.Node)) {
	keys := settings.Keys(scope, prefix)
	p.mapping(m, what, func(name string, k, val *yaml.Node) bool {
		i := slices.IndexFunc(keys, func(s *settings.Setting) bool { return s.Name() == name })
		if i < 0 {
			return false
		}
		if s := keys[i]; s.Kind == settings.Mapping {
			p.section(val, s.Path, scope, s.Path, visit)
		} else {
			visit(s, k, val)
		}
		return true
	}, settings.Names(keys)...)
}

func (p *yamlParser) nodes(s *settings.Setting, val *yaml.Node) []*NodeSpec {
	section := Section(s.Path)
	if val.Kind != yaml.SequenceNode {
		p.report(p.pos(val), diag.BadValue, "%v wants a list of %s (each item starting with `- name:`), got %s", keyRef(s.Path), section, kindName(val))
		return nil
	}
	var out []*NodeSpec
	for _, item := range val.Content {
		if item.Kind != yaml.MappingNode {
			p.report(p.pos(item), diag.BadValue, "each of %s is a mapping starting with `name:`, got %s", section, kindName(item))
			continue
		}
		out = append(out, p.node(item, section))
	}
	return out
}

func (p *yamlParser) node(m *yaml.Node, section Section) *NodeSpec {
	n := &NodeSpec{Section: section, Pos: p.pos(m)}
	scope := section.scope()
	if section != Operators {
		n.Kind = Str{V: section.Singular(), Pos: n.Pos}
	}
	p.nodeName = ""
	if _, name := lookup(m, "name"); name != nil && name.Kind == yaml.ScalarNode {
		p.nodeName = name.Value
	}
	defer func() { p.nodeName = "" }()
	what := section.Singular()
	if p.nodeName != "" {
		what += " " + strconv.Quote(p.nodeName)
	}
	nodeKeys := settings.Names(settings.Keys(scope, ""))
	// Connector options are checked once the connector is known; collect
	// the keys nobody else claims.
	var extra []Str
	var values []*yaml.Node
	p.mapping(m, what, func(name string, k, val *yaml.Node) bool {
		s := settings.Node(scope, "", name)
		switch {
		case s != nil:
			p.nodeKey(n, s, k, val)
		case section == Operators || settings.Node(settings.AnyNode, "", name) != nil && !isConnectorOption(scope, name):
			return false // a key of another section
		default:
			extra = append(extra, Str{V: name, Pos: p.pos(k), Set: true})
			values = append(values, val)
		}
		return true
	}, nodeKeys...)

	if k, _ := lookup(m, "name"); k == nil {
		p.report(n.Pos, diag.Missing, "%s without a name: add %v", section.Singular(), ex("name"))
	}
	if section == Operators && !n.Kind.Set {
		p.report(n.Pos, diag.Missing, "operator %q has no kind: give it one of %s", n.Name.V, strings.Join(settings.OperatorKinds, ", "))
	}
	if section != Operators {
		n.Options = p.connectorOptions(n, nodeKeys, extra, func(i int) Str { return p.str(extra[i].V, values[i]) })
	}
	return n
}

// isConnectorOption reports whether a connector of the scope has an option
// of that name (a Kafka sink's key, which operators have too).
func isConnectorOption(scope settings.Scope, name string) bool {
	for _, c := range settings.Connectors(scope) {
		if c.Option(name) != nil {
			return true
		}
	}
	return false
}

// nodeKey reads one key of a node.
func (p *yamlParser) nodeKey(n *NodeSpec, s *settings.Setting, k, val *yaml.Node) {
	switch {
	case s.Path == "input":
		n.Inputs = append(n.Inputs, p.str(s.Path, val))
	case s.Path == "inputs":
		if val.Kind != yaml.SequenceNode {
			// Reported by strs; an unset input keeps the resolver
			// from reporting the node as having none.
			p.strs(s.Path, val)
			n.Inputs = append(n.Inputs, Str{Pos: p.pos(val)})
			return
		}
		n.Inputs = append(n.Inputs, p.strs(s.Path, val)...)
	case s.Path == "key":
		if val.Kind == yaml.SequenceNode {
			n.Keys = p.strs(s.Path, val)
		} else {
			n.Keys = []Str{p.str(s.Path, val)}
		}
	case slices.Contains(settings.OperatorKinds, s.Path):
		if n.Kind.Set {
			p.report(p.pos(k), diag.Conflict, "operator has two kinds, %s and %s: an operator does one thing, split it into two", n.Kind.V, s.Path)
			return
		}
		n.Kind = Str{V: s.Path, Pos: p.pos(k), Set: true}
		p.kindValue(n, s, val)
	case s.Kind == settings.Mapping:
		switch s.Path {
		case "window":
			n.Window = &WindowSpec{Pos: p.pos(k)}
		case "trigger":
			n.Trigger = &TriggerSpec{Pos: p.pos(k)}
		default:
			n.Timestamps = &TimestampsSpec{Pos: p.pos(k)}
		}
		p.section(val, s.Path, n.Section.scope(), s.Path, func(s *settings.Setting, k, val *yaml.Node) {
			*n.field(s.Path) = p.str(s.Path, val)
		})
	default:
		*n.field(s.Path) = p.str(s.Path, val)
	}
}

// kindValue reads the value of an operator's kind key.
func (p *yamlParser) kindValue(n *NodeSpec, s *settings.Setting, val *yaml.Node) {
	switch s.Path {
	case "aggregate", "join":
		p.section(val, s.Path, settings.Operator, s.Path, func(s *settings.Setting, k, val *yaml.Node) {
			if s.Path == "join.between" {
				n.Between = p.strs(s.Path, val)
			} else {
				*n.field(s.Path) = p.str(s.Path, val)
			}
		})
		if val.Kind == yaml.MappingNode && s.Path == "aggregate" && !n.Add.Set {
			p.report(p.pos(val), diag.Missing, "aggregate needs %v (func(acc *A, in In))", exIn("aggregate.add", "AddFunc"))
		}
		if val.Kind == yaml.MappingNode && s.Path == "join" && !n.Apply.Set {
			p.report(p.pos(val), diag.Missing, "join needs %v (func(L, R) Out)", exIn("join.apply", "JoinFunc"))
		}
	case "process":
		if val.Kind == yaml.SequenceNode {
			// A process with two inputs: a function per input.
			n.Fns = p.strs(s.Path, val)
			if len(n.Fns) > 0 {
				n.Fn = n.Fns[0]
			}
			return
		}
		n.Fn = p.str(s.Path, val)
	case "union":
		// Only YAML writes the value of union (a directive writes the
		// kind), so it is checked here rather than by Resolve.
		p.parse(s, p.str(s.Path, val))
	default:
		*n.field(s.Path) = p.str(s.Path, val)
	}
}

// mapping walks the keys of a mapping node. visit returns false for a key
// it does not know; that key is reported with the known keys and a
// suggestion. Duplicate keys are reported too.
func (p *yamlParser) mapping(m *yaml.Node, what string, visit func(key string, k, val *yaml.Node) bool, known ...string) {
	if m.Kind != yaml.MappingNode {
		p.report(p.pos(m), diag.BadValue, "%s wants a mapping of keys (%s), got %s", what, strings.Join(known, ", "), kindName(m))
		return
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, val := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.report(p.pos(k), diag.Syntax, "keys in %s must be plain words, got %s", what, kindName(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			p.report(p.pos(k), diag.Duplicate, "duplicate key %q in %s (first at line %d)", k.Value, what, prev.Line)
			continue
		}
		seen[k.Value] = k
		if !visit(k.Value, k, val) {
			p.unknownKey(Str{V: k.Value, Pos: p.pos(k), Set: true}, what, known)
		}
	}
}

// str reads the single value of the key at path.
func (p *yamlParser) str(path string, val *yaml.Node) Str {
	if val.Kind != yaml.ScalarNode {
		p.report(p.pos(val), diag.BadValue, "%v wants a single value, got %s", keyRef(path), kindName(val))
		return Str{Pos: p.pos(val)}
	}
	if val.Tag == "!!null" {
		p.report(p.pos(val), diag.Missing, "%v has no value", keyRef(path))
		return Str{Pos: p.pos(val)}
	}
	return Str{V: val.Value, Pos: p.pos(val), Set: true}
}

// strs reads the list of values of the key at path.
func (p *yamlParser) strs(path string, val *yaml.Node) []Str {
	if val.Kind != yaml.SequenceNode {
		p.report(p.pos(val), diag.BadValue, "%v wants a list such as [a, b], got %s", keyRef(path), kindName(val))
		return nil
	}
	var out []Str
	for _, item := range val.Content {
		out = append(out, p.str(path, item))
	}
	return out
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

// kindName names what n is, with its article: "a list", "an alias".
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("a value (%q)", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}
