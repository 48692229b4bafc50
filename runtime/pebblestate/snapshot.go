package pebblestate

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/invariants"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
)

// capture is a checkpoint of the store being taken.
type capture[K comparable, V any] struct {
	id int64
	// seq tells the store's captures apart: an entry whose pend is seq
	// belongs to this one, and its capt reaches seq once encoded.
	seq uint64
	// entries are the values changed since they were last written, as
	// they were at the barrier: the writer encodes them into batch, but
	// for those the subtask encoded first into side, before changing them
	// (copy on write; mu guards side).
	entries []*entry[K, V]
	batch   kv.Batch
	mu      sync.Mutex
	side    kv.Batch
	// written is set once the batches are in the store (the writer's
	// goroutine only).
	written bool
	// finished is set once the capture needs nothing more of the
	// subtask; taken is closed once the store's checkpoint is taken (the
	// store may be written again), done once its files are in the
	// checkpoint directory or the checkpoint is given up.
	finished    atomic.Bool
	taken, done chan struct{}
	// savepoint writes the store in canonical form (writeCanonical).
	savepoint bool
}

// Snapshot adds the keyed state st of node to the subtask's snapshot s.
// At the barrier it only marks the values changed since they were last
// written to the store as the capture's; the writer encodes them (the
// subtask encodes first those it changes before the writer got to them),
// writes them to the store, flushes its memtable and takes a Pebble
// checkpoint of it, and copies (or links) into the checkpoint directory
// the files that the newest completed checkpoint does not hold already.
// Until the store's checkpoint is taken, the subtask writes nothing to
// the store and keeps its changes in the cache.
func Snapshot[K comparable, V any](s *checkpoint.Snapshot, node int, st *Keyed[K, V]) {
	st.snapshot(s, node)
}

func (st *Keyed[K, V]) snapshot(s *checkpoint.Snapshot, node int) {
	if c := st.capture; c != nil {
		// One checkpoint of the store at a time (the previous one expired
		// while its files were still being written, say).
		select {
		case <-c.done:
		case <-st.t.Context().Done():
			fault.Abort(fault.ErrCanceled)
		}
	}
	if st.reads != nil && st.readsAt != st.commits.Load() {
		st.closeReads() // let go of what the store no longer needs
	}
	st.sweepExpired() // expired values (state TTL) leave before the cut
	for _, p := range st.parts {
		p.barrier()
	}
	c, base := st.begin(s.ID, st.t.Committed())
	c.savepoint = s.Savepoint()
	s.AddStateFiles(node, st.state, st.codec.KeySchema, st.codec.ValueSchema,
		func(stor *storage.Storage) ([]storage.StateFile, int64, error) { return st.write(c, base, stor) },
		func() { st.finish(c) })
}

// begin starts the capture of checkpoint id; base is what the newest
// completed checkpoint, committed, holds, which it builds on.
func (st *Keyed[K, V]) begin(id, committed int64) (c *capture[K, V], base map[string]string) {
	if invariants.On {
		st.check()
	}
	st.frozen.Store(true)
	st.seq++
	// The changed values, whose gen was st.seq+1, are c's now (entry.gen).
	c = &capture[K, V]{id: id, seq: st.seq, entries: st.dirty, batch: st.db.NewBatch(), side: st.db.NewBatch(),
		taken: make(chan struct{}), done: make(chan struct{})}
	st.dirty = nil
	base = st.uploaded[committed]
	for id := range st.uploaded {
		if id < committed {
			delete(st.uploaded, id) // never built on again
		}
	}
	st.capture = c
	return c, base
}

// claim makes the calling side the one that encodes e for capture c: it
// returns false when e is encoded already (or being encoded, in which case
// it waits until that is over).
func (c *capture[K, V]) claim(e *entry[K, V]) bool {
	for {
		v := e.capt.Load()
		switch {
		case v&busy != 0:
			runtime.Gosched()
		case v >= c.seq:
			return false
		case e.capt.CompareAndSwap(v, v|busy):
			return true
		}
	}
}

// busy marks an entry's capt while it is being encoded.
const busy = 1 << 63

// holds reports whether e's value as of c's barrier is c's to write: e
// is c's and not encoded yet, or encoded (or being encoded) into one of
// c's batches. Until the writer has written those to the store, the store
// lacks that value, and the cache must keep e. Only the subtask calls it.
func (c *capture[K, V]) holds(e *entry[K, V]) bool {
	return e.gen == c.seq || e.capt.Load() >= c.seq
}

// preImage encodes e for the capture it belongs to, before the subtask
// changes it.
func (st *Keyed[K, V]) preImage(e *entry[K, V]) {
	c := st.capture
	if c == nil || e.gen != c.seq || c.finished.Load() || !c.claim(e) {
		return
	}
	c.mu.Lock()
	err := st.encodeInto(c.side, e, &st.key, &st.val)
	c.mu.Unlock()
	e.capt.Store(c.seq)
	if err != nil {
		st.fail("write", err)
	}
}

// encodeInto adds e's value, or its deletion, to batch b, with key and
// val as buffers.
func (st *Keyed[K, V]) encodeInto(b kv.Batch, e *entry[K, V], key, val *codec.Writer) error {
	k := st.storeKeyIn(key, e.key)
	if e.deleted {
		return b.Delete(k)
	}
	val.Reset()
	if st.codec.TTL > 0 {
		val.Varint(e.ts)
	}
	st.codec.EncodeValue(val, e.val)
	if err := val.Err(); err != nil {
		return fmt.Errorf("encode the value of %v: %w", e.key, err)
	}
	return b.Set(k, val.Bytes())
}

// writeBatches encodes the capture's entries that the subtask did not,
// and writes them and the subtask's to the store. It runs on a writer.
func (st *Keyed[K, V]) writeBatches(c *capture[K, V]) error {
	if c.written {
		return nil
	}
	c.written = true
	var key, val codec.Writer
	var err error
	for _, e := range c.entries {
		if c.claim(e) {
			if err == nil {
				err = st.encodeInto(c.batch, e, &key, &val)
			}
			e.capt.Store(c.seq)
		}
	}
	// Every entry is encoded now, by one side or the other: the subtask
	// adds nothing more to side.
	c.finished.Store(true)
	c.mu.Lock()
	side := c.side
	c.mu.Unlock()
	c.entries = nil
	defer c.batch.Close()
	defer side.Close()
	if err != nil {
		return st.errorf("write", err)
	}
	if err := c.batch.Commit(); err != nil {
		return st.errorf("write", err)
	}
	if err := side.Commit(); err != nil {
		return st.errorf("write", err)
	}
	// Before the cache may drop these values (once the subtask sees the
	// store unfrozen), reads must see them.
	st.committed()
	return nil
}

// finish ends a capture: the store may be written again. Values not
// written yet (the checkpoint failed before the writer got to them) are
// written now: they count as written.
func (st *Keyed[K, V]) finish(c *capture[K, V]) {
	if err := st.writeBatches(c); err != nil {
		// The store lost values: the subtask fails at its next record,
		// and the job restarts from the newest checkpoint.
		st.broken.Store(&err)
	}
	st.frozen.Store(false)
	select {
	case <-c.taken:
	default:
		close(c.taken)
	}
	select {
	case <-c.done:
	default:
		close(c.done)
	}
}

// write takes the store's checkpoint and puts its files in the checkpoint
// directory; it runs on a writer.
func (st *Keyed[K, V]) write(c *capture[K, V], base map[string]string, stor *storage.Storage) (files []storage.StateFile, written int64, err error) {
	defer st.finish(c)
	if err := st.writeBatches(c); err != nil {
		return nil, 0, err
	}
	return st.writeStore(c.id, c.savepoint, c.taken, base, stor)
}

// writeStore is write once the capture's values are in the store: it
// flushes the store, takes its checkpoint, closes taken (the store may be
// written again), and puts the checkpoint's files in the checkpoint
// directory (savepoint: as state files, writeCanonical).
func (st *untyped) writeStore(id int64, savepoint bool, taken chan struct{}, base map[string]string, stor *storage.Storage) (files []storage.StateFile, written int64, err error) {
	local := st.files.dir + fmt.Sprintf(".checkpoint-%d", id)
	st.files.fs.RemoveAll(local)
	defer st.files.fs.RemoveAll(local)
	if err := st.db.Flush(); err != nil {
		return nil, 0, st.errorf("flush", err)
	}
	if err := st.db.Checkpoint(local); err != nil {
		return nil, 0, st.errorf("checkpoint", err)
	}
	// The store holds what it held at the barrier in local: the subtask
	// may write to it again.
	st.frozen.Store(false)
	close(taken)
	st.maybeCompact()

	if savepoint {
		// A savepoint's checkpoint holds the state as state files, which
		// either backend restores; the next checkpoint builds on nothing.
		if !st.noCanonical {
			f, err := st.writeCanonical(id, local, stor)
			if err != nil {
				return nil, 0, err
			}
			files, written = []storage.StateFile{f}, f.Size
		}
		parts, err := st.canonicalParts(id, local, stor)
		if err != nil {
			return nil, 0, err
		}
		st.uploaded[id] = map[string]string{}
		for _, p := range parts {
			files, written = append(files, p), written+p.Size
		}
		return files, written, nil
	}
	names, err := st.files.fs.List(local)
	if err != nil {
		return nil, 0, st.errorf("checkpoint", err)
	}
	if err := stor.MakeShared(); err != nil {
		return nil, 0, err
	}
	sub := st.t.Subtask()
	uploaded := map[string]string{}
	for _, name := range names {
		f := storage.StateFile{Subtask: sub, State: st.state, Kind: storage.KindPebble, Store: name, KeyGroups: [2]int{st.start, st.end}}
		src := filepath.Join(local, name)
		if strings.HasSuffix(name, ".sst") || strings.HasPrefix(name, "OPTIONS-") {
			// Files Pebble never changes once written: shared between
			// the checkpoints that hold them.
			shared := st.names[name]
			if shared == "" {
				shared = fmt.Sprintf("%s-%d-r%06d-%s", st.uid, sub, st.t.RunID(), name)
			}
			f.Name, f.Shared = shared, true
			uploaded[name] = shared
			if base[name] == shared {
				// The newest completed checkpoint holds it already.
				if f.Size, err = st.files.size(src); err != nil {
					return nil, 0, st.errorf("checkpoint", err)
				}
				files = append(files, f)
				continue
			}
			f.Size, _, err = st.files.put(src, stor.SharedPath(shared), false)
		} else {
			// The store's MANIFEST (as it was at the checkpoint), its
			// markers and empty logs: small, and the checkpoint's own.
			f.Name = fmt.Sprintf("%s-%d-%s", st.uid, sub, name)
			f.Size, f.CRC, err = st.files.put(src, stor.Path(id, f.Name), true)
		}
		if err != nil {
			return nil, 0, st.errorf("write "+f.Name, err)
		}
		written += f.Size
		files = append(files, f)
	}
	st.uploaded[id] = uploaded
	return files, written, nil
}

func (st *untyped) errorf(what string, err error) error {
	return fmt.Errorf("operators.%s[%d]: pebble state: %s: %w", st.name, st.t.Subtask(), what, err)
}
