// Package state holds the keyed state of operators: one value per key,
// partitioned by key group so that a snapshot can be split by key-group
// range when a job is restored with another parallelism.
//
// Keyed is the small interface every backend offers. Generated code calls
// a backend's concrete type (chosen when the pipeline is compiled), so that
// the memory backend's lookups inline into the per-record path.
package state
