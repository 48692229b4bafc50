package checkpoint

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// Savepoints are checkpoints a person asks for (the program's savepoint
// and stop --savepoint commands, through package control). The
// coordinator triggers one at once (after the checkpoint under way), in
// which every keyed state is captured whole and in canonical form (the
// memory backend writes a full file instead of a delta; the Pebble backend
// writes its store's keys as state files: Snapshot.Savepoint). Once that
// checkpoint is complete and its output committed, its files are copied
// into a savepoint folder (storage.WriteSavepoint), and the requester gets
// its path; a stop then ends the job.

// SavepointResult is the outcome of a savepoint request.
type SavepointResult struct {
	// Path is the savepoint's folder.
	Path string
	// Checkpoint is the id of the checkpoint it is a copy of.
	Checkpoint int64
	Err        error
}

type savepointReq struct {
	dir   string
	stop  bool
	reply chan SavepointResult
}

func (r *savepointReq) fail(err error) {
	r.reply <- SavepointResult{Err: err}
}

// RequestSavepoint asks for a savepoint written into dir ("" for the
// folder savepoints of the checkpoint directory); with stop, the job
// stops once it is written, as RequestStop does. With drain (which implies
// stop) the sources first stop reading and end event time, as at the end
// of their input, so that every window fires and every event-time timer
// goes off before the savepoint's barrier; keyed state is kept. The result
// comes on the returned channel once the savepoint is written or has
// failed.
func (c *Checkpointer) RequestSavepoint(dir string, stop, drain bool) <-chan SavepointResult {
	if dir == "" {
		dir = filepath.Join(c.st.Dir, storage.SavepointsDir)
	}
	r := &savepointReq{dir: dir, stop: stop, reply: make(chan SavepointResult, 1)}
	if !c.Enabled() {
		r.fail(errors.New("the job takes no checkpoints (checkpoint.mode none): it cannot take a savepoint"))
		return r.reply
	}
	if drain {
		r.stop = true
		c.draining.Store(true)
		c.checkDrained() // a job whose sources have all ended
		go func() {
			// The barrier follows the end of event time on every
			// channel, so each operator has fired what it holds before
			// it takes its snapshot.
			select {
			case <-c.allDrained:
			case <-c.ctx.Done():
				r.fail(errors.New("the job stopped before it had drained"))
				return
			}
			select {
			case c.savepointReqs <- r:
			case <-c.ctx.Done():
				r.fail(errors.New("the job has stopped"))
			}
		}()
		return r.reply
	}
	select {
	case c.savepointReqs <- r:
	case <-c.ctx.Done():
		r.fail(errors.New("the job has stopped"))
	}
	return r.reply
}

// isSavepoint reports whether checkpoint id is a savepoint's.
func (c *Checkpointer) isSavepoint(id int64) bool { return id > 0 && c.savepointID.Load() == id }

// Savepoint reports whether the snapshot is of a savepoint's checkpoint:
// its keyed state is to be written whole, in canonical form (state files
// of key-group sections, each entry a key and a value as the generated
// serializers write them), never as a delta or as a store's own files.
func (s *Snapshot) Savepoint() bool { return s.task.cp.isSavepoint(s.ID) }

// writeSavepoints copies completed checkpoint m into the folder of each
// request and answers it; requests that stop the job stop it once
// answered.
func (c *coordinator) writeSavepoints(m *storage.Manifest, reqs []*savepointReq) {
	paths := map[string]SavepointResult{}
	stop := false
	for _, r := range reqs {
		res, ok := paths[r.dir]
		if !ok {
			path, err := storage.WriteSavepoint(c.st.FS, m, c.st.Path(m.ID), r.dir)
			if err != nil {
				err = fmt.Errorf("write the savepoint of checkpoint %d: %w", m.ID, err)
			} else {
				c.cp.logf("savepoint of checkpoint %d written to %s", m.ID, path)
			}
			res = SavepointResult{Path: path, Checkpoint: m.ID, Err: err}
			paths[r.dir] = res
		}
		r.reply <- res
		stop = stop || r.stop && res.Err == nil
	}
	if stop {
		c.stopAt(m.ID)
	}
}

// failSavepoints answers every request with err.
func failSavepoints(reqs []*savepointReq, err error) {
	for _, r := range reqs {
		r.fail(err)
	}
}

// stopOnce guards the close of Checkpointer.stopped.
type stopOnce struct{ sync.Once }
