// Package catalog lists the built-in connectors and the options each one
// takes. The compiler checks a pipeline's options against it, and the
// generated program checks `run --set` overrides against the same list, so
// the two can never disagree about what an option means.
package catalog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Role says whether a connector reads or writes records.
type Role string

// The roles.
const (
	SourceRole Role = "source"
	SinkRole   Role = "sink"
)

// ValueKind is the type of an option's value.
type ValueKind string

// The value kinds.
const (
	String   ValueKind = "string"
	Duration ValueKind = "duration"
	Int      ValueKind = "int"
	Float    ValueKind = "float"
	Bool     ValueKind = "bool"
	Enum     ValueKind = "enum"
	Ident    ValueKind = "identifier" // a Go type or function name in the user's package
	Char     ValueKind = "character"  // exactly one character
)

// Option describes one connector option.
type Option struct {
	Name    string
	Kind    ValueKind
	Values  []string // the allowed values of an Enum
	Default string
	// Required options have no default and must be set.
	Required bool
	// Static options shape the generated code (a record type, a function);
	// they are fixed when the pipeline is compiled and cannot be overridden
	// with `run --set`.
	Static bool
	// Formats, when set, are the only formats the option applies to.
	Formats []string
	Doc     string
}

// AppliesTo reports whether the option means something for a connector
// reading or writing format.
func (o *Option) AppliesTo(format string) bool {
	return len(o.Formats) == 0 || slices.Contains(o.Formats, format)
}

// Connector describes a built-in connector.
type Connector struct {
	Name    string
	Role    Role
	Doc     string
	Options []Option
}

// Option returns the named option, or nil.
func (c *Connector) Option(name string) *Option {
	for i := range c.Options {
		if c.Options[i].Name == name {
			return &c.Options[i]
		}
	}
	return nil
}

// OptionNames lists the connector's option names in declaration order.
func (c *Connector) OptionNames() []string {
	names := make([]string, len(c.Options))
	for i, o := range c.Options {
		names[i] = o.Name
	}
	return names
}

// Connectors are the built-in connectors.
var Connectors = []*Connector{
	{
		Name: "file", Role: SourceRole,
		Doc: "reads a file, or every file of a directory or glob (sorted by name, spread over the subtasks)",
		Options: []Option{
			{Name: "path", Kind: String, Required: true, Doc: "file, directory or glob pattern; relative paths resolve against the working directory of the running program"},
			{Name: "format", Kind: Enum, Values: []string{"lines", "jsonl", "csv"}, Default: "lines", Static: true, Doc: "lines gives strings; jsonl and csv decode into `type`"},
			{Name: "type", Kind: Ident, Static: true, Doc: "record type for jsonl and csv, a type of the pipeline's package"},
			{Name: "on-error", Kind: Enum, Values: []string{"fail", "skip"}, Default: "fail", Doc: "what a malformed record does: fail the job, or skip it and count it"},
			{Name: "header", Kind: Bool, Default: "true", Formats: []string{"csv"}, Doc: "csv: the first line names the columns (matched to field names or `csv` tags); without it columns map to fields in order"},
			{Name: "delimiter", Kind: Char, Default: ",", Formats: []string{"csv"}, Doc: "csv: the field separator, one character"},
		},
	},
	{
		Name: "generator", Role: SourceRole,
		Doc: "calls a function of the pipeline's package for each sequence number; subtask i of P takes i, i+P, i+2P, ...",
		Options: []Option{
			{Name: "generate", Kind: Ident, Required: true, Static: true, Doc: "func(seq uint64) (T, bool): the record for seq, false once there are no more (for every later seq too)"},
			{Name: "rate", Kind: Float, Default: "0", Doc: "records per second per subtask; 0 for as fast as possible"},
		},
	},
	{
		Name: "file", Role: SinkRole,
		Doc: "writes part files into a directory",
		Options: []Option{
			{Name: "path", Kind: String, Required: true, Doc: "output directory; relative paths resolve against the working directory of the running program"},
			{Name: "format", Kind: Enum, Values: []string{"lines", "jsonl"}, Static: true, Doc: "lines for string or fmt.Stringer records, jsonl for any; default lines for strings, jsonl otherwise"},
		},
	},
	{
		Name: "stdout", Role: SinkRole,
		Doc: "prints records on standard output, one per line",
		Options: []Option{
			{Name: "format", Kind: Enum, Values: []string{"lines", "jsonl"}, Static: true, Doc: "lines for string or fmt.Stringer records, jsonl for any; default lines for strings and Stringers, jsonl otherwise"},
		},
	},
}

// Lookup returns the connector with the given role and name, or nil.
func Lookup(role Role, name string) *Connector {
	for _, c := range Connectors {
		if c.Role == role && c.Name == name {
			return c
		}
	}
	return nil
}

// Names lists the connector names of a role.
func Names(role Role) []string {
	var names []string
	for _, c := range Connectors {
		if c.Role == role {
			names = append(names, c.Name)
		}
	}
	return names
}

// Check reports whether value is valid for option o, with a message that
// says what is expected.
func (o *Option) Check(value string) error {
	switch o.Kind {
	case Duration:
		if _, err := ParseDuration(value); err != nil {
			return err
		}
	case Int:
		if _, err := strconv.Atoi(value); err != nil {
			return fmt.Errorf("%s wants an integer, got %q", o.Name, value)
		}
	case Float:
		if f, err := strconv.ParseFloat(value, 64); err != nil || f < 0 {
			return fmt.Errorf("%s wants a number >= 0, got %q", o.Name, value)
		}
	case Bool:
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Errorf("%s wants true or false, got %q", o.Name, value)
		}
	case Enum:
		if !slices.Contains(o.Values, value) {
			return fmt.Errorf("%s wants one of %s, got %q", o.Name, strings.Join(o.Values, ", "), value)
		}
	case Char:
		if utf8.RuneCountInString(value) != 1 || value == "\n" || value == "\r" || value == "\"" {
			return fmt.Errorf("%s wants one character other than a quote or a line break, got %q", o.Name, value)
		}
	case String:
		if value == "" && o.Required {
			return fmt.Errorf("%s must not be empty", o.Name)
		}
	}
	return nil
}

// ParseDuration reads a Go duration such as 500ms, 10s or 1h30m; it also
// takes a plain 0.
func ParseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write it as 500ms, 10s, 5m or 1h", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	return d, nil
}
