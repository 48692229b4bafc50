// Package invariants turns on the runtime's expensive self-checks: with
// the build tag invariants, structures whose bookkeeping is spread over
// several fields (a timer service's records, heaps, counts and list of
// changes; a keyed state's key group lists, index, entries handed back
// and lists of changes; the pebble backend's cache and its list of
// changed values; window panes' arrays and index; sessions and their
// heap; an exchange's barrier alignment) check that it agrees with itself
// at points where it must, and panic when it does not, naming what
// disagrees. Without the tag On is a false constant and the checks
// compile away, so a pipeline pays nothing.
//
// make invariants runs the runtime's tests and crash tests of generated
// pipelines built with the tag (GOFLAGS' tags reach the pipelines that
// tests build). Pebble keeps its own such checks the same way
// (internal/invariants).
package invariants

import (
	"fmt"
	"strings"
)

// prefix starts the message of every violation.
const prefix = "pipegen: invariant violated: "

// Failf panics with a violated invariant: the runtime's state is wrong,
// and going on could commit wrong output or a checkpoint that restores
// wrong state.
func Failf(format string, args ...any) {
	panic(prefix + fmt.Sprintf(format, args...))
}

// Violation runs check and returns the message of the invariant it found
// violated (Failf), or "" when it found none; any other panic goes on.
// For the tests of the checks, which corrupt what a check watches.
func Violation(check func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(string)
			if !ok || !strings.HasPrefix(s, prefix) {
				panic(r)
			}
			msg = s
		}
	}()
	check()
	return ""
}
