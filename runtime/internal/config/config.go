package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pipegen/pipegen/runtime/settings"
)

// The checkpoint modes.
const (
	ExactlyOnce   = "exactly-once"
	AtLeastOnce   = "at-least-once"
	NoCheckpoints = "none"
)

// Config is a pipeline's settings. Generated code holds the compiled ones;
// the command line's flags and --set overrides apply to a copy.
//
// A field's `setting` tag is the path of the pipeline-wide setting it
// holds: `--set` and `--help` find fields by it, and what a setting means,
// allows and defaults to is in package settings, the one table that the
// compiler reads too.
type Config struct {
	Name string
	// Source is the pipeline file the program was generated from.
	Source string
	// Fingerprint identifies the job's topology and state schemas: a
	// checkpoint records it, and a run whose fingerprint differs checks
	// in detail whether it can resume.
	Fingerprint    string
	Parallelism    int `setting:"parallelism"`
	MaxParallelism int `setting:"max-parallelism"`
	Checkpoint     CheckpointConfig
	Restart        RestartConfig
	StateBackend   string `setting:"state.backend"`
	Nodes          []NodeConfig
}

// CheckpointConfig holds the checkpoint settings.
type CheckpointConfig struct {
	Mode     string        `setting:"checkpoint.mode"`
	Interval time.Duration `setting:"checkpoint.interval"`
	Timeout  time.Duration `setting:"checkpoint.timeout"`
	MinPause time.Duration `setting:"checkpoint.min-pause"`
	Retain   int           `setting:"checkpoint.retain"`
	Dir      string        `setting:"checkpoint.dir"`
}

// RestartConfig is the restart strategy: what the program does when a
// subtask fails (a panic in user code, a failed write). The job restarts in
// the same process from its newest checkpoint, after a delay, as long as
// the strategy allows; then the program exits with the failure.
type RestartConfig struct {
	// Strategy is fixed-delay, failure-rate, exponential-backoff or none.
	Strategy string `setting:"restart.strategy"`
	// Attempts bounds the restarts of fixed-delay and exponential-backoff
	// (0: no bound).
	Attempts int `setting:"restart.attempts"`
	// Delay is the wait before a restart (the first one, for
	// exponential-backoff).
	Delay time.Duration `setting:"restart.delay"`
	// MaxDelay caps exponential-backoff's wait, which grows by Multiplier
	// after every failure.
	MaxDelay   time.Duration `setting:"restart.max-delay"`
	Multiplier float64       `setting:"restart.multiplier"`
	// MaxFailures within Interval make failure-rate give up (0: never).
	MaxFailures int           `setting:"restart.max-failures"`
	Interval    time.Duration `setting:"restart.interval"`
}

// NodeConfig holds one node's settings.
type NodeConfig struct {
	Name string
	UID  string
	// Kind is the node kind as in the pipeline file: source, map, ..., sink.
	Kind string
	// Section is sources, operators or sinks.
	Section   string
	Connector string
	// Format is the record format of a file or stdout connector.
	Format string
	// Parallelism is the node's own setting (0 for the pipeline's default)
	// in compiled settings, and the number of subtasks once resolved.
	Parallelism int
	// Options are the connector options written in the pipeline; once
	// resolved they include every default.
	Options map[string]string
	// ParallelismSet records that the node has a parallelism of its own.
	ParallelismSet bool
	// Watermark is a source's event-time setup (zero without timestamps).
	Watermark WatermarkConfig
	// FusedWith names the node that heads the node's chain ("" for a
	// head): a fused node runs in its head's goroutine, so it has the
	// head's parallelism.
	FusedWith string
	// KeySchema and ValueSchema describe a keyed node's key and state
	// types, field ids included (package schema reads them).
	KeySchema, ValueSchema string
	// BroadcastSchema describes a process node's broadcast state: its
	// map's type.
	BroadcastSchema string
	// Inputs are the node's inputs, as the compiler wired them: what the
	// metrics and the status page draw the job graph from.
	Inputs []NodeInput
	// Window describes a windowed node's window ("tumbling 5s",
	// "sliding 2s every 1s", "session 1s", "interval -1s 1s" for an
	// interval join), followed by " processing-time" for a window on
	// processing time; "" for none.
	Window string
}

// JudgesLate reports whether the node can find records too late: a window
// or a join on event time.
func (n *NodeConfig) JudgesLate() bool {
	return (n.Window != "" || n.Kind == "join") && !strings.HasSuffix(n.Window, " processing-time") && !strings.HasPrefix(n.Window, "count ")
}

// NodeInput is one input of a node.
type NodeInput struct {
	// From names the node read; Side its side output ("late",
	// "dead-letter"), "" for its main output.
	From string `json:"from"`
	Side string `json:"side,omitempty"`
	// Partition is forward, hash, rebalance or broadcast.
	Partition string `json:"partition"`
}

// Option returns a connector option's value (defaults included once the
// settings are resolved).
func (n *NodeConfig) Option(name string) string { return n.Options[name] }

// Clone returns a deep copy.
func (c *Config) Clone() *Config {
	cp := *c
	cp.Nodes = slices.Clone(c.Nodes)
	for i := range cp.Nodes {
		cp.Nodes[i].Options = maps.Clone(c.Nodes[i].Options)
		cp.Nodes[i].Inputs = slices.Clone(c.Nodes[i].Inputs)
	}
	return &cp
}

func (c *Config) node(section, name string) *NodeConfig {
	for i := range c.Nodes {
		if c.Nodes[i].Section == section && c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	return nil
}

func (c *Config) nodeNamed(name string) *NodeConfig {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	panic("runtime: no node " + name)
}

// Catalog returns the table entry of a source's or sink's connector, nil
// for an operator.
func (n *NodeConfig) Catalog() *settings.Connector {
	if n.Section != "sources" && n.Section != "sinks" {
		return nil
	}
	return settings.LookupConnector(settings.ScopeOf(n.Section), n.Connector)
}

// Resolve fills in every node's parallelism and every option's default, and
// checks what only the combination of settings can break.
func (c *Config) Resolve() error {
	for i := range c.Nodes {
		n := &c.Nodes[i]
		switch {
		case n.FusedWith != "":
			// Heads come before the nodes fused with them.
			n.Parallelism = c.nodeNamed(n.FusedWith).Parallelism
		case !n.ParallelismSet:
			n.Parallelism = c.Parallelism
		}
		if conn := n.Catalog(); conn != nil {
			if n.Options == nil {
				n.Options = map[string]string{}
			}
			for _, o := range conn.Options {
				if _, ok := n.Options[o.Path]; !ok && o.Default != "" {
					n.Options[o.Path] = o.Default
				}
			}
		}
		if n.Kind != "source" && n.Kind != "sink" && n.Kind != "map" && n.Kind != "filter" && n.Kind != "flatmap" && n.Kind != "union" && n.Parallelism > c.MaxParallelism {
			return fmt.Errorf("operator %q has parallelism %d but max-parallelism is %d: a keyed operator cannot have more subtasks than key groups", n.Name, n.Parallelism, c.MaxParallelism)
		}
	}
	c.resolveAlignGroups()
	return nil
}

// resolveAlignGroups gives every source with a maximum drift its place in
// its alignment group (WatermarkConfig.AlignSlot, AlignSize): the subtasks
// of the group's sources one after the other, in the order of the nodes.
// A source without a group is a group of its own.
func (c *Config) resolveAlignGroups() {
	group := func(n *NodeConfig) string {
		if g := n.Watermark.AlignGroup; g != "" {
			return "group " + g
		}
		return "node " + n.Name
	}
	size := map[string]int{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		n.Watermark.AlignSlot, n.Watermark.AlignSize = 0, 0
		if n.Watermark.MaxDrift > 0 {
			n.Watermark.AlignSlot = size[group(n)]
			size[group(n)] += n.Parallelism
		}
	}
	for i := range c.Nodes {
		if n := &c.Nodes[i]; n.Watermark.MaxDrift > 0 {
			n.Watermark.AlignSize = size[group(n)]
		}
	}
}
