// Package ir is the typed pipeline graph: what both front ends (YAML and Go
// annotations) produce and what codegen consumes.
//
// It is plain data. Nodes are kept in topological order and refer to each
// other by index; every edge, key, state and function carries its Go type as
// a Type tree that needs no go/types to read. A Pipeline can be dumped as JSON
// (pipegen generate -dump-ir) and compared between front ends.
package ir

import (
	"fmt"
	"strings"
	"time"
)

// Pipeline is one compiled pipeline.
type Pipeline struct {
	Name string `json:"name"`
	// Source is the file the pipeline came from, slash-separated and relative
	// to the user's module root, so that generated code is the same on every
	// machine.
	Source string `json:"source"`
	// Package is the user's Go package that holds the pipeline's types and
	// functions.
	Package Package `json:"package"`
	// Parallelism is the default for every node; the program's --parallelism
	// flag overrides it.
	Parallelism int `json:"parallelism"`
	// MaxParallelism is the number of key groups.
	MaxParallelism int        `json:"maxParallelism"`
	Checkpoint     Checkpoint `json:"checkpoint"`
	Restart        Restart    `json:"restart"`
	StateBackend   string     `json:"stateBackend"`
	Nodes          []*Node    `json:"nodes"`

	// ModuleDir is the absolute directory of the user's module on this
	// machine, where the program is built. It is not part of the graph and
	// not dumped.
	ModuleDir string `json:"-"`
}

// Package names a Go package.
type Package struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

// Checkpoint holds the checkpoint settings with defaults applied.
type Checkpoint struct {
	Mode     string        `json:"mode"` // exactly-once | at-least-once | none
	Interval time.Duration `json:"interval"`
	Timeout  time.Duration `json:"timeout"`
	MinPause time.Duration `json:"minPause"`
	Retain   int           `json:"retain"`
	Dir      string        `json:"dir"`
}

// Restart is the restart strategy with defaults applied: what the program
// does when a subtask fails (a panic in user code, a failed write).
type Restart struct {
	Strategy    string        `json:"strategy"` // fixed-delay | failure-rate | exponential-backoff | none
	Attempts    int           `json:"attempts"` // 0: no limit
	Delay       time.Duration `json:"delay"`
	MaxDelay    time.Duration `json:"maxDelay"`
	Multiplier  float64       `json:"multiplier"`
	MaxFailures int           `json:"maxFailures"`
	Interval    time.Duration `json:"interval"`
}

// Kind is a node's kind.
type Kind string

// The node kinds.
const (
	Source    Kind = "source"
	Map       Kind = "map"
	Filter    Kind = "filter"
	FlatMap   Kind = "flatmap"
	Reduce    Kind = "reduce"
	Aggregate Kind = "aggregate"
	Process   Kind = "process"
	Join      Kind = "join"
	Union     Kind = "union"
	Sink      Kind = "sink"
)

// Stateful reports whether nodes of kind k keep keyed state.
func (k Kind) Stateful() bool {
	switch k {
	case Reduce, Aggregate, Process, Join:
		return true
	}
	return false
}

// Node is a source, an operator or a sink.
type Node struct {
	ID   int    `json:"id"` // index in Pipeline.Nodes
	Name string `json:"name"`
	// UID identifies the node's state across versions of the pipeline.
	UID  string `json:"uid"`
	Kind Kind   `json:"kind"`
	// Parallelism is the node's own setting, 0 for none: a map, filter,
	// flatmap or sink without one runs at its input's parallelism (its
	// input edge is forward, so it is fused behind it), any other node at
	// the pipeline default.
	Parallelism int    `json:"parallelism,omitempty"`
	Inputs      []Edge `json:"inputs,omitempty"`
	// Out is the type of the records the node emits; nil for sinks.
	Out *Type `json:"out,omitempty"`

	// Connector and Options configure sources and sinks. Options hold the
	// values written in the pipeline (not the defaults), sorted by name.
	Connector string   `json:"connector,omitempty"`
	Options   []Option `json:"options,omitempty"`
	// Format is the record format of a file or stdout connector.
	Format string `json:"format,omitempty"`

	// Fn is the node's function: map, filter, flatmap, reduce, a generator
	// source's function.
	Fn *Func `json:"fn,omitempty"`
	// Key is the key function of a keyed node, KeyType its result.
	Key     *Func `json:"key,omitempty"`
	KeyType *Type `json:"keyType,omitempty"`
	// Add and Result are an aggregate's functions; Acc the accumulator type.
	Add    *Func `json:"add,omitempty"`
	Result *Func `json:"result,omitempty"`
	Acc    *Type `json:"acc,omitempty"`
	// Emit says when a keyed node without a window emits: "update" after
	// every record, or "final" once per key when its input ends.
	Emit string `json:"emit,omitempty"`

	// Timed is set when the node's input records carry an event time
	// (they descend from a source with timestamps).
	Timed bool `json:"timed,omitempty"`
	// Timestamps is a source's event-time setup.
	Timestamps *Timestamps `json:"timestamps,omitempty"`
	// Window makes an aggregate or reduce emit once per key and window; a
	// join's window pairs records of the same key and window.
	Window *Window `json:"window,omitempty"`
	// Trigger makes a window fire early; nil for none.
	Trigger *Trigger `json:"trigger,omitempty"`
	// StateTTL makes a keyed node's state without a window (and each
	// entry of a process's map state) expire that long after its last
	// write, in processing time; 0 for never.
	StateTTL time.Duration `json:"stateTTL,omitempty"`
	// Lateness is the allowed lateness of a window: records up to it late
	// update a fired window, later ones go to the side output "late".
	Lateness time.Duration `json:"lateness,omitempty"`
	// Merge merges two accumulators, for aggregates on session windows.
	Merge *Func `json:"merge,omitempty"`
	// State is a process node's per-key state type; OnTimer its timer
	// callback.
	State   *Type `json:"state,omitempty"`
	OnTimer *Func `json:"onTimer,omitempty"`
	// Fns are the functions of a process node with two inputs, one per
	// input (Fn is the first); its Keys are its key functions, one per
	// input (Key is the first).
	Fns []*Func `json:"fns,omitempty"`
	// Broadcast is the broadcast input of a process node with two inputs
	// and its state; nil for none.
	Broadcast *BroadcastState `json:"broadcast,omitempty"`
	// Sides are a process node's side outputs, sorted by name: what its
	// functions pass to ctx.Output, which other nodes read as NODE.NAME.
	Sides []SideOutput `json:"sides,omitempty"`
	// Keys are a join's key functions, one per input; Apply its pair
	// function; Between an interval join's bounds relative to the left
	// record's time.
	Keys    []*Func         `json:"keys,omitempty"`
	Apply   *Func           `json:"apply,omitempty"`
	Between []time.Duration `json:"between,omitempty"`
	// Exclusive names the bounds of Between that a right record's time
	// may not equal: "lower", "upper" or "both"; "" for none.
	Exclusive string `json:"exclusive,omitempty"`

	Pos Pos `json:"pos"`
}

// BroadcastState is the broadcast input of a process node: Inputs[Input]
// reaches every subtask, and Fns[Input] writes the broadcast state, a
// map[Key]Value the same on every subtask.
type BroadcastState struct {
	Input int   `json:"input"`
	Key   *Type `json:"key"`
	Value *Type `json:"value"`
}

// SideOutput is a named output of a node besides its main one.
type SideOutput struct {
	Name string `json:"name"`
	Type *Type  `json:"type"`
	// Pos is the first call that sends to it.
	Pos Pos `json:"pos"`
}

// Side returns n's side output name, or nil.
func (n *Node) Side(name string) *SideOutput {
	for i := range n.Sides {
		if n.Sides[i].Name == name {
			return &n.Sides[i]
		}
	}
	return nil
}

// Timestamps is how a source's records get their event time.
type Timestamps struct {
	// Extract is func(T) time.Time (Shape "time") or func(T) int64 in Unix
	// milliseconds (Shape "millis"); nil for a Kafka source whose records'
	// Kafka timestamps are their event time.
	Extract           *Func         `json:"extract"`
	MaxOutOfOrderness time.Duration `json:"maxOutOfOrderness"`
	IdleTimeout       time.Duration `json:"idleTimeout,omitempty"`
	// MaxDrift bounds how far a file or Kafka source's subtasks'
	// watermarks drift apart (watermark alignment); 0 for none.
	MaxDrift time.Duration `json:"maxDrift,omitempty"`
	// AlignGroup names the sources whose subtasks keep pace with each
	// other's, each within its own MaxDrift; "" for the source alone.
	AlignGroup string `json:"alignGroup,omitempty"`
}

// Window is a window definition.
type Window struct {
	Kind  string        `json:"kind"` // tumbling | sliding | session
	Size  time.Duration `json:"size,omitempty"`
	Every time.Duration `json:"every,omitempty"` // sliding
	Gap   time.Duration `json:"gap,omitempty"`   // session
	// Count is the size of count windows (Kind "count"), in records;
	// CountEvery how many records apart they fire (Count for tumbling).
	Count      int `json:"count,omitempty"`
	CountEvery int `json:"countEvery,omitempty"`
	// GapFn gives each record's session gap, func(In) time.Duration;
	// Gap is 0 then.
	GapFn *Func `json:"gapFn,omitempty"`
	// Processing is set for processing-time windows.
	Processing bool `json:"processing,omitempty"`
}

// Trigger is when a window fires before it closes, and what a firing
// leaves in it.
type Trigger struct {
	// Count fires a key's window after every Count records; 0 for never.
	Count int `json:"count,omitempty"`
	// Every fires the windows that changed at every multiple of Every of
	// event time, or of processing time with Processing; 0 for never.
	Every      time.Duration `json:"every,omitempty"`
	Processing bool          `json:"processing,omitempty"`
	// Discard empties a window after each firing ("discard"); otherwise
	// it accumulates ("accumulate").
	Discard bool `json:"discard,omitempty"`
}

// Text describes the trigger's early firings and mode, as in "every 3
// records and every 10s of event time, accumulate".
func (t *Trigger) Text() string {
	var early []string
	if t.Count > 0 {
		early = append(early, fmt.Sprintf("every %d records", t.Count))
	}
	if t.Every > 0 {
		clock := "event time"
		if t.Processing {
			clock = "processing time"
		}
		early = append(early, fmt.Sprintf("every %s of %s", t.Every, clock))
	}
	mode := "accumulate"
	if t.Discard {
		mode = "discard"
	}
	return strings.Join(early, " and ") + ", " + mode
}

// In returns the type of the node's input records (all inputs of a node
// carry the same type, except for joins).
func (n *Node) In() *Type {
	if len(n.Inputs) == 0 {
		return nil
	}
	return n.Inputs[0].Type
}

// Option is a connector option as written in the pipeline.
type Option struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Option returns the value of the named option and whether it was set.
func (n *Node) Option(name string) (string, bool) {
	for _, o := range n.Options {
		if o.Name == name {
			return o.Value, true
		}
	}
	return "", false
}

// Partition is how records travel along an edge between subtasks.
type Partition string

// The partitionings.
const (
	// Forward sends subtask i's records to subtask i of the next node (in
	// general, every sender to one receiver), keeping their order; codegen
	// fuses a node whose one input is forward behind that input.
	Forward Partition = "forward"
	// Rebalance spreads records round-robin over the next node's subtasks,
	// so records of one sender that meet again downstream (at a keyed
	// node) do so in an order that changes from run to run. Only a node's
	// own parallelism makes one.
	Rebalance Partition = "rebalance"
	// Hash sends each record to the subtask that owns its key group.
	Hash Partition = "hash"
	// Broadcast sends every record to every subtask.
	Broadcast Partition = "broadcast"
)

// Edge is one input of a node.
type Edge struct {
	From int `json:"from"` // index of the upstream node
	// Side names a side output of the upstream node ("" for its main output).
	Side      string    `json:"side,omitempty"`
	Partition Partition `json:"partition"`
	Type      *Type     `json:"type"`
}

// Func is a user function.
type Func struct {
	PkgPath string `json:"pkgPath"`
	Name    string `json:"name"`
	// Shape tells codegen which of a kind's accepted signatures the function
	// has, for example "emit" or "slice" for a flatmap.
	Shape string `json:"shape,omitempty"`
	// Ref: the function takes its input record by pointer (func(*In) ...
	// where func(In) ... is the form by value; a join's apply both its
	// records), and the generated code passes the address of the record it
	// holds rather than a copy. The function must neither keep the pointer
	// nor change the record through it (docs/dsl.md, Records by pointer).
	Ref bool `json:"ref,omitempty"`
	// Signature is the function's type as the user wrote it, for comments in
	// generated code.
	Signature string `json:"signature"`
	Pos       Pos    `json:"pos"`
}

// Pos is a position in a source file. File is relative to the user's module
// root so that the IR is the same on every machine.
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// Paired reports whether node n reads two inputs of their own types,
// each from an inbox of its own: a join, or a process with two inputs.
func (n *Node) Paired() bool {
	return n.Kind == Join || n.Kind == Process && len(n.Inputs) == 2
}

// Fused reports whether node n runs in its input's goroutine, fused
// behind it into one chain: it has one input, connected forward (no
// repartitioning). At run time it has its chain head's parallelism.
func (n *Node) Fused() bool {
	return n.Kind != Source && len(n.Inputs) == 1 && n.Inputs[0].Partition == Forward
}

// SlicedWindows reports whether node n keeps its windows in slices of
// the slide (runtime.NewSlicedWindows) and, for an aggregate with a merge
// function on event-time sliding windows that does not, why not.
// Slices take sliding windows of event time whose size is a multiple of
// the slide, of an aggregate with a merge function, no allowed lateness
// and no trigger, on the memory backend, and a key and accumulator
// without pointers (a merged accumulator must not share what a slice
// goes on changing). A reduce stays per window: its function sees a
// window's records in the order they came, which merging slices would
// change for one that keeps the first of equals.
func (p *Pipeline) SlicedWindows(n *Node) (ok bool, whyNot string) {
	w := n.Window
	if n.Kind != Aggregate || n.Merge == nil || w == nil || w.Kind != "sliding" || w.Processing || w.Size <= w.Every {
		return false, ""
	}
	switch {
	case n.Lateness > 0:
		return false, "it has an allowed lateness"
	case n.Trigger != nil:
		return false, "it has a trigger"
	case p.StateBackend == "pebble":
		return false, "the pebble backend keeps each window whole"
	case w.Size%w.Every != 0:
		return false, fmt.Sprintf("its size %s is not a multiple of its slide %s", w.Size, w.Every)
	case !n.KeyType.PointerFree():
		return false, fmt.Sprintf("its key type %s holds pointers", n.KeyType)
	case !n.Acc.PointerFree():
		return false, fmt.Sprintf("its accumulator type %s holds pointers", n.Acc)
	}
	return true, ""
}

// Head returns the head of n's chain: n itself, or the node that the
// chain of fused nodes n belongs to starts with.
func (p *Pipeline) Head(n *Node) *Node {
	for n.Fused() {
		n = p.Nodes[n.Inputs[0].From]
	}
	return n
}

// Chains lists the pipeline's chains: each a head (a node that is not
// fused) followed by the nodes fused behind it, directly or through
// other fused nodes, in topological order. The nodes of a chain run in
// one goroutine per subtask.
func (p *Pipeline) Chains() [][]*Node {
	var chains [][]*Node
	at := map[int]int{} // head id -> index in chains
	for _, n := range p.Nodes {
		h := p.Head(n)
		i, ok := at[h.ID]
		if !ok {
			i = len(chains)
			at[h.ID] = i
			chains = append(chains, nil)
		}
		chains[i] = append(chains[i], n)
	}
	return chains
}
