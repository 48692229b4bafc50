package pebblestate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// capture is a checkpoint of the store being taken.
type capture struct {
	id int64
	// batch holds the values changed since the last batch, as they were
	// at the barrier: the writer writes it to the store first.
	batch *pebble.Batch
	// taken is closed once the store's checkpoint is taken (the store may
	// be written again), done once its files are in the checkpoint
	// directory or the checkpoint is given up.
	taken, done chan struct{}
}

// Snapshot adds the keyed state st of node to the subtask's snapshot s.
// At the barrier it writes the values changed since the last batch to the
// store; the writer then flushes the store's memtable and takes a Pebble
// checkpoint of it, and copies (or links) into the checkpoint directory
// the files that the newest completed checkpoint does not hold already.
// Until the store's checkpoint is taken, the subtask keeps its changes in
// the cache.
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
	// The values changed since the last batch are encoded now, as they
	// are at the barrier, and written by the writer: the subtask stops
	// only for the encoding. Until the writer has taken the store's
	// checkpoint, nothing else is written to the store (frozen) nor
	// dropped from the cache.
	st.frozen.Store(true)
	b := st.batch()
	committed := st.t.Committed()
	base := st.uploaded[committed]
	for id := range st.uploaded {
		if id < committed {
			delete(st.uploaded, id) // never built on again
		}
	}
	c := &capture{id: s.ID, batch: b, taken: make(chan struct{}), done: make(chan struct{})}
	st.capture = c
	s.AddFiles(node, st.codec.KeySchema, st.codec.ValueSchema,
		func(stor *storage.Storage) ([]storage.StateFile, int64, error) { return st.write(c, base, stor) },
		func() { st.finish(c) })
}

// finish ends a capture: the store may be written again. A batch not
// written yet (the checkpoint failed before) is written now: the values
// count as written.
func (st *Keyed[K, V]) finish(c *capture) {
	if c.batch != nil {
		if err := st.commitBatch(c); err != nil {
			// The store lost values: the subtask fails at its next
			// record, and the job restarts from the newest checkpoint.
			st.broken.Store(&err)
		}
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
func (st *Keyed[K, V]) write(c *capture, base map[string]string, stor *storage.Storage) (files []storage.StateFile, written int64, err error) {
	defer st.finish(c)
	local := st.files.dir + fmt.Sprintf(".checkpoint-%d", c.id)
	st.files.fs.RemoveAll(local)
	defer st.files.fs.RemoveAll(local)
	if err := st.commitBatch(c); err != nil {
		return nil, 0, err
	}
	if err := st.db.Flush(); err != nil {
		return nil, 0, st.errorf("flush", err)
	}
	if err := st.db.Checkpoint(local); err != nil {
		return nil, 0, st.errorf("checkpoint", err)
	}
	// The store holds what it held at the barrier in local: the subtask
	// may write to it again.
	st.frozen.Store(false)
	close(c.taken)
	st.maybeCompact()

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
		f := storage.StateFile{Subtask: sub, Kind: storage.KindPebble, Store: name, KeyGroups: [2]int{st.start, st.end}}
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
			f.Size, f.CRC, err = st.files.put(src, stor.Path(c.id, f.Name), true)
		}
		if err != nil {
			return nil, 0, st.errorf("write "+f.Name, err)
		}
		written += f.Size
		files = append(files, f)
	}
	st.uploaded[c.id] = uploaded
	return files, written, nil
}

func (st *Keyed[K, V]) errorf(what string, err error) error {
	return fmt.Errorf("operators.%s[%d]: pebble state: %s: %w", st.name, st.t.Subtask(), what, err)
}

// commitBatch writes the capture's batch to the store.
func (st *Keyed[K, V]) commitBatch(c *capture) error {
	b := c.batch
	if b == nil {
		return nil
	}
	c.batch = nil
	defer b.Close()
	if err := b.Commit(pebble.NoSync); err != nil {
		return st.errorf("write", err)
	}
	return nil
}
