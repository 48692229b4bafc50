package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/pipegen/pipegen/runtime/settings"
)

// Set applies one `--set KEY=VALUE` override, where KEY is the setting's
// path in the pipeline file. What a key allows, and the message when a
// value is refused, come from package settings, as in the compiler.
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
	parts := strings.SplitN(key, ".", 3)
	if len(parts) == 3 && (parts[0] == "sources" || parts[0] == "operators" || parts[0] == "sinks") {
		n := c.node(parts[0], parts[1])
		if n == nil {
			return fmt.Errorf("no %s named %q (there are: %s)", strings.TrimSuffix(parts[0], "s"), parts[1], strings.Join(c.names(parts[0]), ", "))
		}
		return c.setNode(n, parts[2], value)
	}
	s := settings.Lookup(key)
	if s == nil || !s.HasValue() {
		var paths []string
		for _, o := range settings.Overridable() {
			paths = append(paths, o.Path)
		}
		return fmt.Errorf("unknown setting %q: --set takes %s, sources.NAME.OPTION, operators.NAME.parallelism and sinks.NAME.OPTION", key, strings.Join(paths, ", "))
	}
	if s.Static {
		return fmt.Errorf("%s is fixed when the pipeline is compiled: change it in %s and rebuild", key, c.Source)
	}
	v, err := s.Parse(value)
	if err != nil {
		return err
	}
	f, ok := c.Field(key)
	if !ok {
		panic("config: no field holds setting " + key)
	}
	f.Set(reflect.ValueOf(v).Convert(f.Type()))
	return nil
}

// Field returns the field of c that holds the pipeline-wide setting at
// path (its `setting` tag).
func (c *Config) Field(path string) (reflect.Value, bool) {
	return field(reflect.ValueOf(c).Elem(), path)
}

func field(v reflect.Value, path string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("setting") == path {
			return v.Field(i), true
		}
		if f.Type.Kind() == reflect.Struct && f.Tag.Get("setting") == "" {
			if fv, ok := field(v.Field(i), path); ok {
				return fv, true
			}
		}
	}
	return reflect.Value{}, false
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

func (c *Config) setNode(n *NodeConfig, key, value string) error {
	if key == "parallelism" {
		if n.FusedWith != "" {
			head := c.nodeNamed(n.FusedWith)
			return fmt.Errorf("%s runs fused with %s (in its goroutine, records passed by plain calls), so it has the parallelism of %s: set %s.%s.parallelism instead", n.Name, head.Name, head.Name, head.Section, head.Name)
		}
		v, err := settings.Node(settings.ScopeOf(n.Section), "", "parallelism").Parse(value)
		if err != nil {
			return err
		}
		n.Parallelism, n.ParallelismSet = v.(int), true
		return nil
	}
	conn := n.Catalog()
	if conn == nil {
		return fmt.Errorf("operator %q has no option %q: only its parallelism can be set at run time", n.Name, key)
	}
	o := conn.Option(key)
	if o == nil {
		return fmt.Errorf("the %s %s %q has no option %q (it takes: %s)", conn.Name, conn.Scope, n.Name, key, strings.Join(conn.OptionNames(), ", "))
	}
	if o.Static {
		return fmt.Errorf("%s is fixed when the pipeline is compiled: change it in %s and rebuild", key, c.Source)
	}
	if n.Format != "" {
		if err := o.CheckFormat(n.Format); err != nil {
			return err
		}
	}
	if _, err := o.Parse(value); err != nil {
		return err
	}
	if n.Options == nil {
		n.Options = map[string]string{}
	}
	n.Options[key] = value
	return nil
}
