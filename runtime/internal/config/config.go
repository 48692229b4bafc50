package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pipegen/pipegen/runtime/catalog"
)

// The checkpoint modes.
const (
	ExactlyOnce   = "exactly-once"
	AtLeastOnce   = "at-least-once"
	NoCheckpoints = "none"
)

// Config is a pipeline's settings. Generated code holds the compiled ones;
// the command line's flags and --set overrides apply to a copy.
type Config struct {
	Name string
	// Source is the pipeline file the program was generated from.
	Source         string
	Parallelism    int
	MaxParallelism int
	Checkpoint     CheckpointConfig
	Restart        RestartConfig
	StateBackend   string
	Nodes          []NodeConfig
}

// CheckpointConfig holds the checkpoint settings.
type CheckpointConfig struct {
	Mode     string
	Interval time.Duration
	Timeout  time.Duration
	MinPause time.Duration
	Retain   int
	Dir      string
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

// Catalog returns the catalog entry of a source or sink's connector, nil
// for an operator.
func (n *NodeConfig) Catalog() *catalog.Connector {
	switch n.Section {
	case "sources":
		return catalog.Lookup(catalog.SourceRole, n.Connector)
	case "sinks":
		return catalog.Lookup(catalog.SinkRole, n.Connector)
	}
	return nil
}

// Set applies one `--set KEY=VALUE` override, where KEY is the setting's
// path in the pipeline file.
func (c *Config) Set(kv string) error {
	key, value, ok := strings.Cut(kv, "=")
	if !ok || key == "" {
		return fmt.Errorf("--set %q: write KEY=VALUE, for example --set sources.lines.path=big.txt", kv)
	}
	if err := c.set(key, value); err != nil {
		return fmt.Errorf("--set %s: %w", kv, err)
	}
	return nil
}

func (c *Config) set(key, value string) error {
	parts := strings.Split(key, ".")
	switch {
	case key == "parallelism":
		return setPositive(&c.Parallelism, value)
	case key == "max-parallelism":
		return setPositive(&c.MaxParallelism, value)
	case parts[0] == "checkpoint" && len(parts) == 2:
		return c.setCheckpoint(parts[1], value)
	case parts[0] == "restart" && len(parts) == 2:
		return c.setRestart(parts[1], value)
	case parts[0] == "state" && len(parts) == 2 && parts[1] == "backend":
		return fmt.Errorf("the state backend is chosen when the pipeline is compiled: change state.backend in %s and rebuild", c.Source)
	case (parts[0] == "sources" || parts[0] == "operators" || parts[0] == "sinks") && len(parts) == 3:
		n := c.node(parts[0], parts[1])
		if n == nil {
			return fmt.Errorf("no %s named %q (there are: %s)", strings.TrimSuffix(parts[0], "s"), parts[1], strings.Join(c.names(parts[0]), ", "))
		}
		return c.setNode(n, parts[2], value)
	}
	return fmt.Errorf("unknown setting %q: settings are parallelism, max-parallelism, checkpoint.mode|interval|timeout|min-pause|retain|dir, restart.strategy|attempts|delay|max-delay|multiplier|max-failures|interval, sources.NAME.OPTION, operators.NAME.parallelism and sinks.NAME.OPTION", key)
}

func (c *Config) names(section string) []string {
	var names []string
	for _, n := range c.Nodes {
		if n.Section == section {
			names = append(names, n.Name)
		}
	}
	return names
}

func (c *Config) setCheckpoint(key, value string) error {
	cp := &c.Checkpoint
	switch key {
	case "mode":
		switch value {
		case ExactlyOnce, AtLeastOnce, NoCheckpoints:
			cp.Mode = value
			return nil
		}
		return fmt.Errorf("checkpoint.mode wants exactly-once, at-least-once or none, got %q", value)
	case "interval", "timeout", "min-pause":
		d, err := catalog.ParseDuration(value)
		if err != nil {
			return err
		}
		switch key {
		case "interval":
			if d == 0 {
				return fmt.Errorf("checkpoint.interval must be more than 0; to turn checkpoints off set checkpoint.mode=none")
			}
			cp.Interval = d
		case "timeout":
			if d == 0 {
				return fmt.Errorf("checkpoint.timeout must be more than 0")
			}
			cp.Timeout = d
		default:
			cp.MinPause = d
		}
		return nil
	case "retain":
		return setPositive(&cp.Retain, value)
	case "dir":
		if value == "" {
			return fmt.Errorf("checkpoint.dir must not be empty")
		}
		cp.Dir = value
		return nil
	}
	return fmt.Errorf("unknown checkpoint setting %q (there are: mode, interval, timeout, min-pause, retain, dir)", key)
}

func (c *Config) setNode(n *NodeConfig, key, value string) error {
	if key == "parallelism" {
		if n.FusedWith != "" {
			head := c.nodeNamed(n.FusedWith)
			return fmt.Errorf("%s runs fused with %s (in its goroutine, records passed by plain calls), so it has the parallelism of %s: set %s.%s.parallelism instead", n.Name, head.Name, head.Name, head.Section, head.Name)
		}
		if err := setPositive(&n.Parallelism, value); err != nil {
			return err
		}
		n.ParallelismSet = true
		return nil
	}
	return n.set(key, value, c.Source)
}

func (n *NodeConfig) set(key, value, source string) error {
	conn := n.Catalog()
	if conn == nil {
		return fmt.Errorf("operator %q has no option %q: only its parallelism can be set at run time", n.Name, key)
	}
	o := conn.Option(key)
	if o == nil {
		return fmt.Errorf("the %s %s %q has no option %q (it takes: %s)", conn.Name, conn.Role, n.Name, key, strings.Join(conn.OptionNames(), ", "))
	}
	if o.Static {
		return fmt.Errorf("%s is fixed when the pipeline is compiled: change it in %s and rebuild", key, source)
	}
	if n.Format != "" && !o.AppliesTo(n.Format) {
		return fmt.Errorf("%s applies to format %s only, and %s %q reads %s", key, strings.Join(o.Formats, ", "), conn.Role, n.Name, n.Format)
	}
	if err := o.Check(value); err != nil {
		return err
	}
	if n.Options == nil {
		n.Options = map[string]string{}
	}
	n.Options[key] = value
	return nil
}

func setPositive(dst *int, value string) error {
	v, err := strconv.Atoi(value)
	if err != nil || v < 1 {
		return fmt.Errorf("want a whole number of at least 1, got %q", value)
	}
	*dst = v
	return nil
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
				if _, ok := n.Options[o.Name]; !ok && o.Default != "" {
					n.Options[o.Name] = o.Default
				}
			}
		}
		if n.Kind != "source" && n.Kind != "sink" && n.Kind != "map" && n.Kind != "filter" && n.Kind != "flatmap" && n.Kind != "union" && n.Parallelism > c.MaxParallelism {
			return fmt.Errorf("operator %q has parallelism %d but max-parallelism is %d: a keyed operator cannot have more subtasks than key groups", n.Name, n.Parallelism, c.MaxParallelism)
		}
	}
	return nil
}
