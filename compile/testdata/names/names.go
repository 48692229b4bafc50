// Package names is a fixture of the compiler's tests: its pipeline gives
// nodes names that generated code must not take as they are.
package names

import "strings"

func Next(seq uint64) (string, bool) { return "a bb ccc", seq < 3 }

func Split(line string, emit func(string)) {
	for w := range strings.FieldsSeq(line) {
		emit(w)
	}
}

func Upper(s string) string { return strings.ToUpper(s) }

func Key(s string) int { return len(s) }

func Longer(acc, s string) string {
	if len(s) > len(acc) {
		return s
	}
	return acc
}

func Keep(s string) bool { return s != "" }
