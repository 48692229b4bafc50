// Package invariants turns on the runtime's expensive self-checks: with
// the build tag invariants, structures whose bookkeeping is spread over
// several fields (a timer service's records, heaps and counts) check
// that it agrees with itself at points where it must, and panic when it
// does not, naming what disagrees. Without the tag On is a false
// constant and the checks compile away, so a pipeline pays nothing.
//
// make invariants runs the runtime's tests and crash tests of generated
// pipelines built with the tag (GOFLAGS' tags reach the pipelines that
// tests build). Pebble keeps its own such checks the same way
// (internal/invariants).
package invariants

import "fmt"

// Failf panics with a violated invariant: the runtime's state is wrong,
// and going on could commit wrong output or a checkpoint that restores
// wrong state.
func Failf(format string, args ...any) {
	panic("pipegen: invariant violated: " + fmt.Sprintf(format, args...))
}
