// Package pebblestate is the pebble state backend (state.backend: pebble):
// the keyed state of a reduce, aggregate or process operator's subtask
// (and a process operator's timers) in a Pebble store
// (github.com/cockroachdb/pebble/v2) on disk, so that the state may be
// far larger than memory. Generated code imports it only for
// pipelines with that backend, so that other programs do not link Pebble.
//
// Keys are the key group (2 bytes, big-endian) followed by the key as
// the generated serializer writes it; values are the generated
// serializer's bytes. A subtask's key groups are a contiguous range of
// keys, so that a restore at another parallelism takes the ranges it owns
// now from the old stores.
//
// In front of the store, a cache of decoded values (Keyed) serves the
// per-record path as a Go map does; the values changed since they were
// last written are written to the store in batches, and at every barrier.
//
// A process operator's timers (Timers) are in the same store, under keys
// from byte 0x80 on (parts.go), and checkpoint and restore with it. The
// tumbling and sliding windows of a windowed reduce or aggregate
// (Windows) are a store of their own: per key and window a value, and a
// timer at the window's end. So are its session windows (Sessions): per
// key its sessions, and a timer per session. With a trigger (Triggered)
// they are those, each accumulator with the trigger's count. Count
// windows (CountWindows) are a store with a value per key. So are the buffers of an
// interval join (IntervalJoin, joins.go): per key and side the records in
// time order, and each again by the time it can no longer match. A window
// join (WindowJoin) is Windows, or Sessions for a join on sessions, whose
// accumulators are the windows' records.
//
// A checkpoint is a Pebble checkpoint: at the barrier the subtask writes
// its changed values and marks the cut; the writer then flushes the
// memtable and takes the store's checkpoint (hard links), while the
// subtask goes on with values in its cache (it writes nothing to the store
// until the checkpoint is taken). Its sstables go to the checkpoint
// directory's shared folder, once: a file that the newest completed
// checkpoint already holds is referred to again, not written, and the
// manifests list every file of each subtask's store. On a local file
// system they are hard links, on others copies. A restore at the same
// parallelism links the files back and opens the store; at another one,
// each subtask copies into a new store the key-group ranges it owns from
// the old stores. A checkpoint written by the memory backend restores
// into a pebble one too.
//
// A process's map state field F (pipegen.MapState; map.go) is a store of
// its own, the node's state "map.F", checkpointed and restored the same
// way: its keys are the key group, the operator's key and the map's key
// in an order-preserving encoding, so that one key's map is a range of
// the store in the order of its map keys, and a Get reads one entry. With
// a state TTL (ttl.go) each stored value begins with its write time.
//
// The generic types see the store only through the interfaces of
// internal/kv, which name no Pebble type: a program instantiates them in
// its own package, and a Pebble type reached from one of their fields or
// method signatures made every such program compile Pebble's own
// generic code again (TestNoPebbleGenerics).
package pebblestate
