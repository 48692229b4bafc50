// Package cascade is a fixture of dsl's tests: values of the wrong shape,
// which must be reported once, by the front end.
package cascade

import "strings"

func Next(seq uint64) (string, bool) { return "a b", seq < 3 }

func Upper(s string) string { return strings.ToUpper(s) }

func Split(s string, emit func(string)) {
	for w := range strings.FieldsSeq(s) {
		emit(w)
	}
}

func Key(s string) string { return s }

func Key2(s string) int { return len(s) }

func Longer(acc, s string) string {
	if len(s) > len(acc) {
		return s
	}
	return acc
}
