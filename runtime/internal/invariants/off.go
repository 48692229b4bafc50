//go:build !invariants

package invariants

// On reports whether the build checks the runtime's invariants (the
// build tag invariants).
const On = false
