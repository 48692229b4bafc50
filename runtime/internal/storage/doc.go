// Package storage is the on-disk format of checkpoints: the layout of a
// checkpoint directory, the manifest that commits a checkpoint, and the
// state files it names.
//
// The checkpoint directory holds one folder per checkpoint:
//
//	DIR/chk-000007/counts-0.state   keyed state of subtask 0 of "counts"
//	DIR/chk-000007/MANIFEST         written last: the commit point
//
// A state file holds one section per key group of its subtask's range and
// ends with a CRC-32C of everything before it. The manifest is JSON followed
// by a line with its own CRC-32C; it is written to MANIFEST.tmp, synced,
// renamed and the folder synced, so a checkpoint either has a whole,
// durable manifest or none.
package storage
