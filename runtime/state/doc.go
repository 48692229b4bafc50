// Package state holds the keyed state of operators: one value per key,
// partitioned by key group so that a snapshot can be split by key-group
// range when a job is restored with another parallelism.
//
// Keyed is the small interface every backend offers. Generated code calls
// a backend's concrete type (chosen when the pipeline is compiled), so that
// the memory backend's lookups inline into the per-record path.
//
// The memory backend (memory.go) finds a key's entry through an index
// (index.go): a Go map while the state is small, and once it holds 64K
// keys a hash table of its own (table.go) whose slots are in the order of
// the keys' hashes, so that a restore fills it front to back from batches
// sorted by hash instead of taking a cache miss per key.
//
// A process's map state (pipegen.MapState, mapstate.go) is a keyed state
// of its own, keyed by MapKey (the operator's key and the map's key, in
// the key group of the operator's key), so that each entry is written and
// checkpointed by itself. State TTL (ttl.go) keeps each value's write time
// beside it and never returns an expired value.
package state
