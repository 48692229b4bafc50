package dsl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/runtime/settings"
)

// Messages name keys and show examples through parts, which each front end
// writes in its own syntax, the way sqlc's sqlerr keeps an error's parts
// apart from its text: the type checker says keyRef("checkpoint.interval")
// and ex("key", "KeyFunc"), and the message reads `checkpoint.interval` and
// "`key: KeyFunc`" for a YAML pipeline, `checkpoint.interval=` and
// "key=KeyFunc" for one written as directives. A diagnostic also records
// the first key a message names as its Key.

// keyRef names a key in a message: its path, as in the settings table.
type keyRef string

// example shows a key set to a value (more values: a list).
type example struct {
	path   string
	values []string
	// inner is set when the message is about the section that holds the
	// key: YAML then shows the key alone (`every: SLIDE`, not
	// `window: {every: SLIDE}`).
	inner bool
}

// ex shows the key at path set to values.
func ex(path string, values ...string) example { return example{path: path, values: values} }

// exIn is ex for a key of the section the message is about.
func exIn(path string, values ...string) example {
	return example{path: path, values: values, inner: true}
}

// addNode says how to add a node of a section to the pipeline.
type addNode settings.Scope

// syntax writes the parts of messages in the form of one front end.
type syntax interface {
	settings.Syntax
	// exampleIn shows the key at path inside its own section.
	exampleIn(path string, values ...string) string
	// addNode says how to add a node of the scope.
	addNode(scope settings.Scope) string
}

// yamlSyntax writes keys as paths (checkpoint.interval) and examples as
// YAML: `key: KeyFunc`, `window: {tumbling: 10s}`, `key: [A, B]`.
type yamlSyntax struct{}

func (yamlSyntax) Key(path string) string { return path }

func (yamlSyntax) Example(path string, values ...string) string {
	elems := strings.Split(path, ".")
	s := elems[len(elems)-1] + ":" + yamlValue(values)
	for i := len(elems) - 2; i >= 0; i-- {
		s = elems[i] + ": {" + s + "}"
	}
	return "`" + s + "`"
}

func (yamlSyntax) exampleIn(path string, values ...string) string {
	return "`" + path[strings.LastIndexByte(path, '.')+1:] + ":" + yamlValue(values) + "`"
}

func yamlValue(values []string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return " " + values[0]
	}
	return " [" + strings.Join(values, ", ") + "]"
}

func (yamlSyntax) addNode(scope settings.Scope) string {
	return "a `" + scope.Section() + ":` list"
}

// directiveSyntax writes keys as a //pipegen: directive does: key=,
// checkpoint.interval=, result= (an aggregate's, written aggregate.result in
// YAML), and examples as key=value, lists comma-separated.
type directiveSyntax struct {
	// pipeline is the pipeline= a node directive needs ("" when its package
	// declares one pipeline).
	pipeline string
}

func (directiveSyntax) Key(path string) string {
	if k, ok := directiveKey(path); ok {
		return k + "="
	}
	return path
}

func (directiveSyntax) Example(path string, values ...string) string {
	k, ok := directiveKey(path)
	if !ok {
		k = path
	}
	return k + "=" + strings.Join(values, ",")
}

func (s directiveSyntax) exampleIn(path string, values ...string) string {
	return s.Example(path, values...)
}

func (s directiveSyntax) addNode(scope settings.Scope) string {
	d := "//pipegen:" + scope.String() + " NAME"
	if s.pipeline != "" {
		d += " pipeline=" + s.pipeline
	}
	if scope == settings.Sink {
		d += " input=..."
	}
	return d + " connector=..."
}

// functionKeys are the keys whose function is, in a directive, the
// function under it.
var functionKeys = append([]string{"aggregate.add", "join.apply", "generate"}, settings.OperatorKinds...)

// directiveKey is the key a directive writes for the key at path; false
// for keys it has no key=value for: sections, names, the function under
// the directive, the version and package of a pipeline.
func directiveKey(path string) (string, bool) {
	if path == "name" || path == "version" || path == "package" || slices.Contains(functionKeys, path) {
		return "", false
	}
	s := settings.Lookup(path)
	if s == nil {
		s = settings.Node(settings.AnyNode, "", path)
	}
	if s != nil && (s.Kind == settings.Mapping || s.Kind == settings.Nodes) {
		return "", false
	}
	// A kind's own keys are the directive's: aggregate.result is result=.
	if section, k, ok := strings.Cut(path, "."); ok && slices.Contains(settings.OperatorKinds, section) {
		return k, true
	}
	return path, true
}

// reporter collects diagnostics, writing their parts in the syntax of the
// front end the pipeline came from.
type reporter struct {
	diags  *diag.List
	syntax syntax
	// nodeName is the name of the node being read or checked, "" for
	// none.
	nodeName string
}

// report records a problem at pos. args may hold parts (keyRef, example,
// addNode, *settings.Error), written in the reporter's syntax; the first
// key they name is the diagnostic's Key.
func (r *reporter) report(pos diag.Pos, kind diag.Kind, format string, args ...any) {
	d := diag.Diagnostic{Pos: pos, Kind: kind, Node: r.nodeName}
	args = slices.Clone(args)
	for i, a := range args {
		var path string
		switch a := a.(type) {
		case keyRef:
			path, args[i] = string(a), r.syntax.Key(string(a))
		case example:
			path = a.path
			if a.inner {
				args[i] = r.syntax.exampleIn(a.path, a.values...)
			} else {
				args[i] = r.syntax.Example(a.path, a.values...)
			}
		case addNode:
			args[i] = r.syntax.addNode(settings.Scope(a))
		case *settings.Error:
			path, args[i] = a.Path, a.Message(r.syntax)
		}
		if d.Key == "" {
			d.Key = path
		}
	}
	d.Msg = fmt.Sprintf(format, args...)
	r.diags.Report(d)
}

// parse reads a value of the setting as written, reporting a value it does
// not take; false when the value is missing or was reported.
func (r *reporter) parse(s *settings.Setting, v Str) (any, bool) {
	if !v.Set {
		return nil, false
	}
	x, err := s.Parse(v.V)
	if err != nil {
		kind := diag.BadValue
		if slices.Contains(s.Reserved, v.V) {
			kind = diag.Unsupported
		}
		r.report(v.Pos, kind, "%v", err)
		return nil, false
	}
	return x, true
}

// unknownKey reports a key that a place does not have, with a suggestion
// and the keys it has.
func (r *reporter) unknownKey(k Str, where string, known []string) {
	r.report(k.Pos, diag.UnknownKey, "unknown key %q in %s%s (known keys: %s)", k.V, where, suggest(k.V, known), strings.Join(known, ", "))
}

// connectorOptions checks the connector of a source or sink, and the keys
// of the node that are not node keys against its options; it returns the
// options, with the values that value reads for the keys it knows.
func (r *reporter) connectorOptions(n *NodeSpec, nodeKeys []string, keys []Str, value func(i int) Str) []OptionSpec {
	scope := n.Section.scope()
	if n.Connector.Pos.Line == 0 { // not written at all
		r.report(n.Kind.Pos, diag.Missing, "%s %q has no connector: add %v (one of %s)", scope, n.Name.V, ex("connector"), strings.Join(settings.ConnectorNames(scope), ", "))
		return nil
	}
	if _, ok := r.parse(settings.Node(scope, "", "connector"), n.Connector); !ok {
		return nil // of the wrong shape or unknown: reported
	}
	conn := settings.LookupConnector(scope, n.Connector.V)
	var out []OptionSpec
	for i, k := range keys {
		if conn.Option(k.V) == nil {
			all := append(slices.Clone(nodeKeys), conn.OptionNames()...)
			r.report(k.Pos, diag.UnknownKey, "unknown key %q in %s %q%s (the %s %s takes %s)", k.V, scope, n.Name.V, suggest(k.V, all), conn.Name, scope, strings.Join(conn.OptionNames(), ", "))
			continue
		}
		out = append(out, OptionSpec{Name: k, Value: value(i)})
	}
	return out
}
