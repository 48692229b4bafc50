package pebblestate

import "github.com/pipegen/pipegen/runtime/internal/eventtime"

// inlineBodies calls eventtime.AddSat and SubSat, which the windows,
// sessions and joins here call per record, so that this package's
// compilation inlines them and its export data carries their bodies: a
// generated program compiles its own instances of those generic types,
// and without the bodies they called them at every record
// (runtime/inline.go says why); it never runs.
func inlineBodies() {
	_ = eventtime.AddSat(0, 0)
	_ = eventtime.SubSat(0, 0)
}

var _ = inlineBodies
