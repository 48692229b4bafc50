package settings

import (
	"slices"
	"strings"
	"time"
)

// Kind is the kind of a setting's value.
type Kind string

// The kinds of values.
const (
	Int      Kind = "integer"   // a whole number of at least Min
	Float    Kind = "number"    // a number of at least Min
	Duration Kind = "duration"  // Go syntax (500ms, 1h30m) or a plain 0
	Bool     Kind = "bool"      // true or false
	Enum     Kind = "enum"      // one of Values
	Char     Kind = "character" // exactly one character
	String   Kind = "string"    // any text but the empty one
	Name     Kind = "name"      // a name matching Pattern
	NodeRef  Kind = "input"     // the name of a node, or NODE.late
	Func     Kind = "function"  // a function of the pipeline's Go package
	Type     Kind = "type"      // a type of the pipeline's Go package
	Mapping  Kind = "mapping"   // a section of further keys (checkpoint, window)
	Nodes    Kind = "nodes"     // a list of nodes (sources, operators, sinks)
)

// Scope says where a key is written: in the pipeline itself or in a node.
// Keys that every node takes have several scopes.
type Scope uint8

// The scopes.
const (
	Pipeline Scope = 1 << iota
	Source
	Operator
	Sink

	AnyNode = Source | Operator | Sink
)

// String is "pipeline", "source", "operator" or "sink" (for one scope).
func (s Scope) String() string {
	switch s {
	case Pipeline:
		return "pipeline"
	case Source:
		return "source"
	case Operator:
		return "operator"
	case Sink:
		return "sink"
	}
	return "node"
}

// Section is the pipeline key that lists nodes of the scope: "sources",
// "operators" or "sinks".
func (s Scope) Section() string { return s.String() + "s" }

// ScopeOf returns the scope of a section ("sources": Source), or 0.
func ScopeOf(section string) Scope {
	for _, s := range []Scope{Source, Operator, Sink} {
		if s.Section() == section {
			return s
		}
	}
	return 0
}

// OperatorKinds are the kinds of operators; an operator's kind key is the
// key named after its kind (map: F, aggregate: {...}, union: true).
var OperatorKinds = []string{"map", "filter", "flatmap", "reduce", "aggregate", "process", "join", "union"}

// MaxParallelism bounds max-parallelism, the number of key groups, as
// Flink bounds it: each key group has its own section in every state file
// and an entry in every routing table, so a bound keeps a typo from taking
// gigabytes. It bounds every parallelism too.
const MaxParallelism = 32768

// Setting describes one key of a pipeline file.
type Setting struct {
	// Path is the key's place, dotted: "parallelism", "checkpoint.interval".
	// A node key's path is relative to its node ("window.every"), a
	// connector option's is its name ("path").
	Path  string
	Scope Scope
	Kind  Kind
	// List values are lists of Kind values; Len, when not 0, is the number
	// of items such a list must have.
	List bool
	Len  int
	// OrList values are one Kind value or a list of Len of them (a
	// process's functions and keys: a list for two inputs).
	OrList bool
	// Values are the values an Enum allows; on an Int or a Bool, the only
	// values it takes (version: 1, union: true).
	Values []string
	// Reserved values of an Enum are named by the format but not supported
	// by this version: Parse says so.
	Reserved []string
	// Pattern is what a Name or NodeRef must match, PatternDoc the same in
	// words.
	Pattern    *Pattern
	PatternDoc string
	// Min is the least value of an Int or Float; Max, when not 0, the
	// largest of an Int.
	Min, Max float64
	// MinDuration is the least value of a Duration (0: any duration that
	// is not negative). Signed durations may be negative.
	MinDuration time.Duration
	Signed      bool
	// Hint follows the message of a value below the minimum.
	Hint *Hint
	// Default is the value a missing key has, as a pipeline file writes
	// it; "" when there is none. DefaultDoc describes a default that
	// depends on other keys ("the node's name").
	Default    string
	DefaultDoc string
	// Required keys must be written (within their section, when they have
	// one).
	Required bool
	// Static settings shape the generated code (a record type, a
	// function, the graph); they are fixed when the pipeline is compiled
	// and cannot be changed with `run --set`.
	Static bool
	// Kinds, on operator keys, are the operator kinds that take the key
	// (nil: every kind).
	Kinds []string
	// Formats, on connector options, are the only formats the option
	// applies to (nil: every format).
	Formats []string
	// Nodes is the scope of the nodes a Nodes key lists.
	Nodes Scope
	// Help says what the key does, in one line.
	Help string
}

// Hint is a suggestion that follows a message: Format with one %s, which
// an example of Path set to Value fills in the syntax of the message.
type Hint struct {
	Format      string
	Path, Value string
}

// Name is the last element of the setting's path: the key as written in
// its own section.
func (s *Setting) Name() string { return s.Path[strings.LastIndexByte(s.Path, '.')+1:] }

// Parent is the path of the section that holds the setting, "" at the top
// of its scope.
func (s *Setting) Parent() string {
	if i := strings.LastIndexByte(s.Path, '.'); i >= 0 {
		return s.Path[:i]
	}
	return ""
}

// HasValue reports whether the key holds a value, rather than a section
// of keys (checkpoint, window) or a list of nodes (sources).
func (s *Setting) HasValue() bool { return s.Kind != Mapping && s.Kind != Nodes }

// For reports whether an operator of the kind takes the key.
func (s *Setting) For(kind string) bool { return s.Kinds == nil || slices.Contains(s.Kinds, kind) }

// AppliesTo reports whether a connector option means something for a
// connector reading or writing format.
func (s *Setting) AppliesTo(format string) bool {
	return len(s.Formats) == 0 || slices.Contains(s.Formats, format)
}

// CheckFormat returns an error when a connector option does not apply to
// format; the compiler and `run --set` refuse such an option the same way.
func (s *Setting) CheckFormat(format string) *Error {
	if s.AppliesTo(format) {
		return nil
	}
	verb := " reads "
	if s.Scope == Sink {
		verb = " writes "
	}
	return &Error{Path: s.Path, Problem: "applies to format " + orList(s.Formats) + " only, and the " + s.Scope.String() + verb + format}
}

// DefaultValue is the parsed default, nil when the setting has none.
func (s *Setting) DefaultValue() any {
	if s.Default == "" {
		return nil
	}
	v, err := s.Parse(s.Default)
	if err != nil {
		panic("settings: the default of " + s.Path + ": " + err.Error())
	}
	return v
}

// Connector describes a built-in connector and its options.
type Connector struct {
	Name string
	// Scope is Source or Sink.
	Scope   Scope
	Help    string
	Options []*Setting
	// Rescalable sources keep positions that any subtask can take over
	// (a Kafka partition's offset): a run may resume them at another
	// parallelism.
	Rescalable bool
}

// Option returns the named option, or nil.
func (c *Connector) Option(name string) *Setting {
	for _, o := range c.Options {
		if o.Path == name {
			return o
		}
	}
	return nil
}

// OptionNames lists the connector's options in the order of the table.
func (c *Connector) OptionNames() []string {
	names := make([]string, len(c.Options))
	for i, o := range c.Options {
		names[i] = o.Path
	}
	return names
}

// Lookup returns the pipeline-wide setting at path ("parallelism",
// "checkpoint.interval", "checkpoint"), or nil.
func Lookup(path string) *Setting { return Node(Pipeline, "", path) }

// Node returns the key at path of a node of the scope (Source, Operator or
// Sink; Pipeline for the pipeline's own keys). kind, for an operator, is
// its kind when the key's form depends on it (a join's key is a list);
// with "" the first form is returned. It returns nil for a key the scope
// does not have; connector options are not node keys (see
// [LookupConnector]).
func Node(scope Scope, kind, path string) *Setting {
	var first *Setting
	for _, s := range table {
		if s.Scope&scope == 0 || s.Path != path {
			continue
		}
		if kind == "" || s.For(kind) {
			return s
		}
		if first == nil {
			first = s
		}
	}
	return first
}

// KindsOf lists the operator kinds that take the operator key at path, in
// every form it has (a join's key is a list), in the order of
// OperatorKinds.
func KindsOf(path string) []string {
	var kinds []string
	for _, kind := range OperatorKinds {
		if s := Node(Operator, kind, path); s != nil && s.For(kind) {
			kinds = append(kinds, kind)
		}
	}
	return kinds
}

// KindsText is KindsOf for messages: "reduce, aggregate and join".
func KindsText(path string) string { return andList(KindsOf(path)) }

// Keys lists the keys of the scope directly inside the section at prefix
// ("" for the top of the scope, "checkpoint", "window"), each once, in the
// order of the table.
func Keys(scope Scope, prefix string) []*Setting {
	var out []*Setting
	for _, s := range table {
		if s.Scope&scope == 0 || s.Parent() != prefix {
			continue
		}
		if !slices.ContainsFunc(out, func(o *Setting) bool { return o.Path == s.Path }) {
			out = append(out, s)
		}
	}
	return out
}

// All lists every key of the scope, sections and their keys, in the order
// of the table (each form of a key with several).
func All(scope Scope) []*Setting {
	var out []*Setting
	for _, s := range table {
		if s.Scope&scope != 0 {
			out = append(out, s)
		}
	}
	return out
}

// Names lists the keys' names, as written in their own sections.
func Names(list []*Setting) []string {
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.Name()
	}
	return names
}

// Overridable lists the pipeline-wide settings that `run --set` can change,
// in the order of the table.
func Overridable() []*Setting {
	var out []*Setting
	for _, s := range All(Pipeline) {
		if !s.Static && s.HasValue() {
			out = append(out, s)
		}
	}
	return out
}

// LookupConnector returns the connector of the scope (Source or Sink) with
// the given name, or nil.
func LookupConnector(scope Scope, name string) *Connector {
	for _, c := range connectors {
		if c.Scope == scope && c.Name == name {
			return c
		}
	}
	return nil
}

// Connectors lists the connectors of a scope (Source or Sink).
func Connectors(scope Scope) []*Connector {
	var out []*Connector
	for _, c := range connectors {
		if c.Scope == scope {
			out = append(out, c)
		}
	}
	return out
}

// ConnectorNames lists the names of the connectors of a scope.
func ConnectorNames(scope Scope) []string {
	var names []string
	for _, c := range Connectors(scope) {
		names = append(names, c.Name)
	}
	return names
}

// andList writes "a", "a and b", "a, b and c".
func andList(items []string) string { return joinLast(items, " and ") }

// orList writes "a", "a or b", "a, b or c".
func orList(items []string) string { return joinLast(items, " or ") }

func joinLast(items []string, last string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + last + items[len(items)-1]
}
