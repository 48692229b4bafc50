package file

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// lockName is the lock file in a file sink's directory. It starts with a
// dot: readers of the output skip it, as they skip uncommitted parts.
const lockName = ".pipegen-lock"

// Lock takes the lock of sink n's directory, creating the directory.
func (committer) Lock(fsys vfs.FS, n *config.NodeConfig) (io.Closer, error) {
	dir, err := filepath.Abs(n.Option("path"))
	if err != nil || n.Option("path") == "" {
		return nil, fmt.Errorf("bad path %q", n.Option("path"))
	}
	if err := vfs.MkdirAllDurable(fsys, dir); err != nil {
		return nil, err
	}
	l, err := fsys.Lock(filepath.Join(dir, lockName))
	var locked *vfs.LockedError
	if errors.As(err, &locked) {
		holder := "another process"
		if locked.Holder != "" {
			holder = locked.Holder
		}
		return nil, fmt.Errorf("output directory %s is in use by another instance of a job (%s): two writers would overwrite each other's part files; stop the other one first, or set sinks.%s.path to a directory of its own", dir, holder, n.Name)
	}
	return l, err
}
