package dsl

import (
	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/runtime/settings"
)

// Spec is a pipeline as written, before any Go type is known: what a front
// end reads from YAML or from //pipegen: directives. Every value keeps the
// position it was written at, so that the type checker can point at it.
type Spec struct {
	File string // the file the pipeline was read from, as given
	// Pos is where the pipeline is declared: the start of its file, or the
	// name of its //pipegen:pipeline directive.
	Pos     diag.Pos
	Version int
	Name    Str
	// Package is the user's Go package: a directory relative to File's
	// directory, or an import path.
	Package Str
	// Settings are the pipeline's other settings as written, by their
	// path in the settings table: "parallelism", "checkpoint.interval".
	Settings  map[string]Str
	Sources   []*NodeSpec
	Operators []*NodeSpec
	Sinks     []*NodeSpec

	// pkg is the user's package when the front end has loaded it already
	// (the annotations' package); Resolve loads Package otherwise.
	pkg *userPackage
	// syntax is how messages about the spec write keys: the front end's.
	syntax syntax
}

// set records the value of the pipeline-wide setting at path.
func (s *Spec) set(path string, v Str) {
	switch path {
	case "name":
		s.Name = v
	case "package":
		s.Package = v
	default:
		if s.Settings == nil {
			s.Settings = map[string]Str{}
		}
		s.Settings[path] = v
	}
}

// Nodes returns sources, operators and sinks in the order written.
func (s *Spec) Nodes() []*NodeSpec {
	var all []*NodeSpec
	all = append(all, s.Sources...)
	all = append(all, s.Operators...)
	return append(all, s.Sinks...)
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

// scope is the section's scope in the settings table.
func (s Section) scope() settings.Scope { return settings.ScopeOf(string(s)) }

// NodeSpec is one source, operator or sink as written.
type NodeSpec struct {
	Section     Section
	Pos         diag.Pos // the node's first key
	Name        Str
	UID         Str
	Parallelism Str
	// Inputs lists `input` or `inputs`.
	Inputs []Str

	// Kind is the operator's kind key (map, filter, ...) with its position;
	// "source" or "sink" for the other sections.
	Kind Str
	// Fn is the function named by the kind key: map, filter, flatmap,
	// reduce, process.
	Fn Str
	// Fns are the functions of a process with two inputs, one per input
	// (Fn is the first).
	Fns []Str
	// Key names the key function; a join has one per input.
	Keys []Str
	// Add, Result and Merge are an aggregate's functions.
	Add    Str
	Result Str
	Merge  Str
	// OnTimer is a process node's timer callback.
	OnTimer Str
	// Broadcast names a process node's broadcast input.
	Broadcast Str
	// Apply, Between and Exclusive describe a join.
	Apply     Str
	Between   []Str
	Exclusive Str
	// Window, Trigger, AllowedLateness and Emit shape keyed operators.
	Window          *WindowSpec
	Trigger         *TriggerSpec
	AllowedLateness Str
	Emit            Str
	// StateTTL is state-ttl: how long a key's state outlives its last
	// write.
	StateTTL Str

	// Connector and its options, for sources and sinks.
	Connector Str
	Options   []OptionSpec
	// Timestamps is a source's `timestamps:` section.
	Timestamps *TimestampsSpec
}

// field is where the node keeps the value of the key at path (see the
// settings table), for the keys that hold a single value; nil for the
// others. A window or timestamps key makes the section if it is missing.
func (n *NodeSpec) field(path string) *Str {
	switch path {
	case "name":
		return &n.Name
	case "uid":
		return &n.UID
	case "parallelism":
		return &n.Parallelism
	case "connector":
		return &n.Connector
	case "map", "filter", "flatmap", "reduce", "process":
		return &n.Fn
	case "aggregate.add":
		return &n.Add
	case "aggregate.result":
		return &n.Result
	case "aggregate.merge":
		return &n.Merge
	case "join.apply":
		return &n.Apply
	case "join.exclusive":
		return &n.Exclusive
	case "allowed-lateness":
		return &n.AllowedLateness
	case "emit":
		return &n.Emit
	case "state-ttl":
		return &n.StateTTL
	case "on-timer":
		return &n.OnTimer
	case "broadcast":
		return &n.Broadcast
	case "window.tumbling", "window.sliding", "window.every", "window.session", "window.session-gap", "window.time", "window.count", "window.count-every":
		if n.Window == nil {
			n.Window = &WindowSpec{}
		}
		w := n.Window
		return map[string]*Str{"window.tumbling": &w.Tumbling, "window.sliding": &w.Sliding, "window.every": &w.Every, "window.session": &w.Session, "window.session-gap": &w.SessionGap, "window.time": &w.Time, "window.count": &w.Count, "window.count-every": &w.CountEvery}[path]
	case "trigger.count", "trigger.every", "trigger.time", "trigger.mode":
		if n.Trigger == nil {
			n.Trigger = &TriggerSpec{}
		}
		t := n.Trigger
		return map[string]*Str{"trigger.count": &t.Count, "trigger.every": &t.Every, "trigger.time": &t.Time, "trigger.mode": &t.Mode}[path]
	case "timestamps.extract", "timestamps.max-out-of-orderness", "timestamps.idle-timeout", "timestamps.max-drift", "timestamps.align-group":
		if n.Timestamps == nil {
			n.Timestamps = &TimestampsSpec{}
		}
		t := n.Timestamps
		return map[string]*Str{"timestamps.extract": &t.Extract, "timestamps.max-out-of-orderness": &t.MaxOutOfOrderness, "timestamps.idle-timeout": &t.IdleTimeout, "timestamps.max-drift": &t.MaxDrift, "timestamps.align-group": &t.AlignGroup}[path]
	}
	return nil
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
	// SessionGap names a function that gives each record's session gap.
	SessionGap Str
	// Count and CountEvery make count windows.
	Count, CountEvery Str
	Time              Str // event | processing
}

// TriggerSpec is a window's `trigger:` section.
type TriggerSpec struct {
	Pos   diag.Pos
	Count Str
	Every Str
	Time  Str // event | processing
	Mode  Str // accumulate | discard
}

// TimestampsSpec is a source's `timestamps:` section.
type TimestampsSpec struct {
	Pos               diag.Pos
	Extract           Str
	MaxOutOfOrderness Str
	IdleTimeout       Str
	MaxDrift          Str
	AlignGroup        Str
}

// Str is a string value and where it was written. Set is false when the
// key was absent.
type Str struct {
	V   string
	Pos diag.Pos
	Set bool
}
