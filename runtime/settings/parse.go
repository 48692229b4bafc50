package settings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Parse reads and checks one value of the setting as written (for a list,
// one item). It returns int for Int, float64 for Float, time.Duration for
// Duration, bool for Bool, and the string itself for every other kind. Its
// error is an *Error, the same whether the value came from YAML, a
// directive or `--set`.
func (s *Setting) Parse(value string) (any, error) {
	v, e := s.parse(value)
	if e != nil {
		e.Path, e.Value = s.Path, value
		return nil, e
	}
	return v, nil
}

func (s *Setting) parse(value string) (any, *Error) {
	switch s.Kind {
	case Int:
		n, err := strconv.Atoi(value)
		if s.Max != 0 && (err != nil || float64(n) < s.Min || float64(n) > s.Max) {
			return nil, &Error{Want: fmt.Sprintf("a whole number from %g to %g", s.Min, s.Max)}
		}
		if err != nil || float64(n) < s.Min {
			return nil, &Error{Want: fmt.Sprintf("a whole number of at least %g", s.Min)}
		}
		if len(s.Values) > 0 && !slices.Contains(s.Values, value) {
			return nil, &Error{Want: orList(s.Values)}
		}
		return n, nil
	case Float:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || f < s.Min {
			return nil, &Error{Want: fmt.Sprintf("a number of at least %g", s.Min)}
		}
		return f, nil
	case Duration:
		return s.duration(value)
	case Bool:
		b, err := strconv.ParseBool(value)
		if err != nil || len(s.Values) > 0 && !slices.Contains(s.Values, value) {
			return nil, &Error{Want: orList(s.boolValues())}
		}
		return b, nil
	case Enum:
		if slices.Contains(s.Reserved, value) {
			return nil, &Error{Problem: fmt.Sprintf("%s is not supported yet: use %s", value, orList(s.Values))}
		}
		if !slices.Contains(s.Values, value) {
			return nil, &Error{Want: orList(s.Values)}
		}
	case Char:
		if utf8.RuneCountInString(value) != 1 || value == "\n" || value == "\r" || value == "\"" {
			return nil, &Error{Want: "one character other than a quote or a line break"}
		}
	case Name, NodeRef:
		if s.Pattern != nil && !s.Pattern.MatchString(value) {
			return nil, &Error{Want: s.PatternDoc}
		}
	}
	if value == "" {
		return nil, &Error{Problem: "must not be empty"}
	}
	return value, nil
}

func (s *Setting) boolValues() []string {
	if len(s.Values) > 0 {
		return s.Values
	}
	return []string{"true", "false"}
}

func (s *Setting) duration(value string) (time.Duration, *Error) {
	d, err := time.ParseDuration(value)
	if value == "0" {
		d, err = 0, nil
	}
	switch {
	case err != nil && s.Signed:
		return 0, &Error{Want: "a duration such as -5s, 500ms, 10s or 1m"}
	case err != nil:
		return 0, &Error{Want: "a duration such as 500ms, 10s, 5m or 1h"}
	case d < 0 && !s.Signed:
		return 0, &Error{Problem: fmt.Sprintf("must not be negative, got %q", value)}
	case d < s.MinDuration && s.MinDuration == time.Nanosecond:
		return 0, &Error{Problem: "must be more than 0", Hint: s.Hint}
	case d < s.MinDuration && !s.Signed:
		return 0, &Error{Problem: fmt.Sprintf("must be at least %s, got %q", s.MinDuration, value), Hint: s.Hint}
	}
	return d, nil
}

// Error is a value a setting does not take. Its message names the setting
// in the syntax of the place the value came from (see [Syntax]).
type Error struct {
	// Path is the setting's path, as in the table.
	Path string
	// Value is the value as written.
	Value string
	// Want says what the setting takes, when the value is not of its
	// kind: "PATH wants WANT, got VALUE".
	Want string
	// Problem says what is wrong otherwise: "PATH PROBLEM".
	Problem string
	// Hint, if any, follows.
	Hint *Hint
}

// Message words the error with keys and examples written in syntax s.
func (e *Error) Message(s Syntax) string {
	var msg string
	if e.Want != "" {
		msg = fmt.Sprintf("%s wants %s, got %q", s.Key(e.Path), e.Want, e.Value)
	} else {
		msg = s.Key(e.Path) + " " + e.Problem
	}
	if e.Hint != nil {
		msg += ": " + fmt.Sprintf(e.Hint.Format, s.Example(e.Hint.Path, e.Hint.Value))
	}
	return msg
}

// Error words the error as `--set` does.
func (e *Error) Error() string { return e.Message(Flag) }

// Syntax is how a message names keys and shows examples, in the form of the
// place a value came from: the YAML file (`checkpoint.interval`,
// "`checkpoint: {mode: none}`"), a //pipegen: directive
// (`checkpoint.interval=`, "checkpoint.mode=none") or the command line.
type Syntax interface {
	// Key names the setting at path.
	Key(path string) string
	// Example shows the setting at path set to the values (more than one:
	// a list).
	Example(path string, values ...string) string
}

// Flag is the syntax of `run --set`.
var Flag Syntax = flagSyntax{}

type flagSyntax struct{}

func (flagSyntax) Key(path string) string { return path }

func (flagSyntax) Example(path string, values ...string) string {
	return "--set " + path + "=" + strings.Join(values, ",")
}
