package pebblestate

import (
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
)

// The store of a keyed node's subtask holds, beside the per-key values
// (keys starting with their key group, below 0x8000: max-parallelism is
// at most 32768), the node's other keyed structures, each under its own
// first byte, from 0x80 on:
const (
	// prefixTimer: a process operator's timer, by key group and key:
	// 0x80, key group (2 bytes), key, domain (1 byte), time (8 bytes,
	// ordered) -> registration number (uvarint).
	prefixTimer = 0x80
	// prefixTimerTime: the same timer ordered by when it runs: 0x81,
	// domain, time, registration number (8 bytes), key group, key ->
	// nothing. It is derived from the first: a restore at another
	// parallelism rebuilds it from the key-group ranges it copies.
	prefixTimerTime = 0x81
	// prefixMeta: the subtask's counters, such as the timers' next
	// registration number (0x82 't').
	prefixMeta = 0x82
	// prefixEnd is above every key of the store.
	prefixEnd = 0xff
)

// A part is a keyed structure of a node kept in the node's store beside
// its per-key values, under its own prefix: it is in every checkpoint of
// the store, and restores with it.
type part interface {
	// barrier writes the part's changes to the store, at the barrier,
	// before the store's checkpoint is marked: the store is not frozen
	// then.
	barrier()
	// copyFrom copies the part's entries of key groups [lo, hi) from old,
	// the store of a subtask of the checkpoint the job resumes from, into
	// the store (a restore at another parallelism), before any use.
	copyFrom(old kv.Store, lo, hi int)
	// writeCanonical writes the part's entries in db, the store's
	// checkpoint for savepoint id, as the memory backend's state file
	// (none when another part's file holds them).
	writeCanonical(db kv.Store, id int64, stor *storage.Storage) ([]storage.StateFile, error)
	// close lets go of what the part holds of the store, before it closes.
	close()
}

// addPart makes p a part of the store.
func (s *untyped) addPart(p part) { s.parts = append(s.parts, p) }

// canonicalParts writes the parts of the store's checkpoint in folder
// local as state files of savepoint id.
func (s *untyped) canonicalParts(id int64, local string, stor *storage.Storage) ([]storage.StateFile, error) {
	if len(s.parts) == 0 {
		return nil, nil
	}
	db, err := s.files.open(local, true)
	if err != nil {
		return nil, s.errorf("open the checkpoint", err)
	}
	defer db.Close()
	var files []storage.StateFile
	for _, p := range s.parts {
		f, err := p.writeCanonical(db, id, stor)
		if err != nil {
			return nil, err
		}
		files = append(files, f...)
	}
	return files, nil
}
