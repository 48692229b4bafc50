package runtime

import (
	"github.com/pipegen/pipegen/runtime/internal/drive"
)

// The test driver (package drive): `pipegen generate --test` emits a job
// whose sources and sinks are the driver's, and a typed Driver over this
// one that a Go test uses to push records, move watermarks and processing
// time, take checkpoints, restore, and read the sinks.

type (
	// Driver runs a job in a test, one step at a time.
	Driver = drive.Driver
	// DriverOptions change how a Driver runs the job: its parallelism,
	// state backend and the start of processing time.
	DriverOptions = drive.Options
	// DriverTB is what a Driver needs of a *testing.T.
	DriverTB = drive.TB
	// DriverSource and DriverSink are the driver's source and sink
	// subtasks.
	DriverSource[T any] = drive.Source[T]
	DriverSink[T any]   = drive.Sink[T]
)

// NewDriver starts the job that build wires, with settings cfg, for test t.
func NewDriver(t DriverTB, cfg *Config, build func(*Job), o DriverOptions) *Driver {
	t.Helper()
	return drive.New(t, cfg, build, o)
}

// NewDriverSource prepares subtask sub of source node, which reads what
// the driver pushes.
func NewDriverSource[T any](j *Job, node, sub int) *DriverSource[T] {
	return drive.NewSource[T](j, node, sub)
}

// NewDriverSink prepares subtask sub of sink node, whose records the
// driver keeps.
func NewDriverSink[T any](j *Job, node, sub int) *DriverSink[T] {
	return drive.NewSink[T](j, node, sub)
}

// DriverEmitted is every record sink node emitted that no restore
// dropped, committed or not.
func DriverEmitted[T any](d *Driver, node int) []T { return drive.Emitted[T](d, node) }

// DriverCommitted is every record of sink node that a completed checkpoint
// committed.
func DriverCommitted[T any](d *Driver, node int) []T { return drive.Committed[T](d, node) }
