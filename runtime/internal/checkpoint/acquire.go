package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// lockName is the lock file of a checkpoint directory: one instance of a
// job at a time writes into it.
const lockName = "LOCK"

// Acquire makes the checkpoint directory ready for this run before
// anything is read or written: it exists, it can be written to (found now,
// not after the input was processed), and no other instance of the job
// uses it. The lock is held until the returned Closer is closed or the
// process ends. It does nothing when the job takes no checkpoints.
func (c *Checkpointer) Acquire() (io.Closer, error) {
	if !c.Enabled() {
		return nopCloser{}, nil
	}
	dir := c.st.Dir
	if dir == "" {
		return nil, errors.New("checkpoint.dir is empty: set it, or --checkpoint-dir, to the directory where checkpoints are kept")
	}
	if err := vfs.MkdirAllDurable(c.fs, dir); err != nil {
		return nil, fmt.Errorf("cannot create the checkpoint directory: %w", err)
	}
	lock, err := c.fs.Lock(filepath.Join(dir, lockName))
	var locked *vfs.LockedError
	switch {
	case errors.As(err, &locked):
		holder := "another process"
		if locked.Holder != "" {
			holder = locked.Holder
		}
		return nil, fmt.Errorf("checkpoint directory %s is in use by another instance of this job (%s): two instances would overwrite each other's checkpoints and output; stop the other one first, or give this one a --checkpoint-dir of its own", dir, holder)
	case err != nil:
		return nil, fmt.Errorf("checkpoint directory %s: %w", dir, err)
	}
	// A checkpoint that cannot be written would be found only at the
	// first barrier, after the job has done its first interval of work.
	probe := filepath.Join(dir, ".write-test")
	if err := vfs.WriteFileSync(c.fs, probe, nil); err != nil {
		lock.Close()
		return nil, fmt.Errorf("checkpoint directory %s cannot be written to: %w", dir, err)
	}
	if err := c.fs.Remove(probe); err != nil {
		lock.Close()
		return nil, fmt.Errorf("checkpoint directory %s: %w", dir, err)
	}
	return lock, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
