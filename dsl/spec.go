package dsl

import "github.com/pipegen/pipegen/diag"

// Spec is a pipeline as written, before any Go type is known: what a front
// end reads from YAML or from //pipegen: directives. Every value keeps the
// position it was written at, so that the type checker can point at it.
type Spec struct {
	File    string // the file the pipeline was read from, as given
	Version int
	Name    Str
	// Package is the user's Go package: a directory relative to File's
	// directory, or an import path.
	Package        Str
	Parallelism    Int
	MaxParallelism Int
	Checkpoint     CheckpointSpec
	Restart        RestartSpec
	StateBackend   Str
	Sources        []*NodeSpec
	Operators      []*NodeSpec
	Sinks          []*NodeSpec

	// pkg is the user's package when the front end has loaded it already
	// (the annotations' package); Resolve loads Package otherwise.
	pkg *userPackage
}

// Nodes returns sources, operators and sinks in the order written.
func (s *Spec) Nodes() []*NodeSpec {
	var all []*NodeSpec
	all = append(all, s.Sources...)
	all = append(all, s.Operators...)
	return append(all, s.Sinks...)
}

// CheckpointSpec is the `checkpoint:` section.
type CheckpointSpec struct {
	Pos      diag.Pos
	Mode     Str
	Interval Str
	Timeout  Str
	MinPause Str
	Retain   Int
	Dir      Str
}

// RestartSpec is the `restart:` section.
type RestartSpec struct {
	Pos         diag.Pos
	Strategy    Str
	Attempts    Str
	Delay       Str
	MaxDelay    Str
	Multiplier  Str
	MaxFailures Str
	Interval    Str
}

// Section says where a node was declared.
type Section string

// The sections of a pipeline.
const (
	Sources   Section = "sources"
	Operators Section = "operators"
	Sinks     Section = "sinks"
)

// Singular is "source", "operator" or "sink", for messages.
func (s Section) Singular() string { return string(s[:len(s)-1]) }

// NodeSpec is one source, operator or sink as written.
type NodeSpec struct {
	Section     Section
	Pos         diag.Pos // the node's first key
	Name        Str
	UID         Str
	Parallelism Int
	// Inputs lists `input` or `inputs`.
	Inputs []Str

	// Kind is the operator's kind key (map, filter, ...) with its position;
	// "source" or "sink" for the other sections.
	Kind Str
	// Fn is the function named by the kind key: map, filter, flatmap,
	// reduce, process.
	Fn Str
	// Key names the key function; a join has one per input.
	Keys []Str
	// Add, Result and Merge are an aggregate's functions.
	Add    Str
	Result Str
	Merge  Str
	// OnTimer is a process node's timer callback.
	OnTimer Str
	// Apply and Between describe a join.
	Apply   Str
	Between []Str
	// Window, AllowedLateness and Emit shape keyed operators.
	Window          *WindowSpec
	AllowedLateness Str
	Emit            Str

	// Connector and its options, for sources and sinks.
	Connector Str
	Options   []OptionSpec
	// Timestamps is a source's `timestamps:` section.
	Timestamps *TimestampsSpec
}

// Option returns the named connector option.
func (n *NodeSpec) Option(name string) (OptionSpec, bool) {
	for _, o := range n.Options {
		if o.Name.V == name {
			return o, true
		}
	}
	return OptionSpec{}, false
}

// OptionSpec is a connector option as written.
type OptionSpec struct {
	Name  Str
	Value Str
}

// WindowSpec is a `window:` section.
type WindowSpec struct {
	Pos      diag.Pos
	Tumbling Str
	Sliding  Str
	Every    Str
	Session  Str
	Time     Str // event | processing
}

// TimestampsSpec is a source's `timestamps:` section.
type TimestampsSpec struct {
	Pos               diag.Pos
	Extract           Str
	MaxOutOfOrderness Str
	IdleTimeout       Str
}

// Str is a string value and where it was written. Set is false when the
// key was absent.
type Str struct {
	V   string
	Pos diag.Pos
	Set bool
}

// Int is an integer value and where it was written.
type Int struct {
	V   int
	Pos diag.Pos
	Set bool
}
