package checkpoint

import (
	"fmt"
	"path/filepath"

	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// MoveAside moves every checkpoint folder of the checkpoint directory into
// its folder aside-TAG (aside-TAG-2, ... when that exists), for a run that
// starts over (run --fresh) without deleting what an earlier one left:
// `--from-checkpoint DIR/aside-TAG/chk-N` can still resume from one of
// them. It says what it moved, "" for nothing. The caller holds the
// directory's lock (Acquire).
func (c *Checkpointer) MoveAside(tag string) (string, error) {
	entries, err := c.st.List()
	if err != nil || len(entries) == 0 {
		return "", err
	}
	aside := vfs.Unused(c.fs, filepath.Join(c.st.Dir, "aside-"+tag))
	if err := vfs.MkdirAllDurable(c.fs, aside); err != nil {
		return "", err
	}
	for _, e := range entries {
		name := storage.FolderName(e.ID)
		if err := c.fs.Rename(c.st.Path(e.ID), filepath.Join(aside, name)); err != nil {
			return "", fmt.Errorf("move %s aside: %w", name, err)
		}
	}
	// The files the checkpoints share go with them.
	shared := filepath.Join(c.st.Dir, storage.SharedDir)
	if _, err := c.fs.Stat(shared); err == nil {
		if err := c.fs.Rename(shared, filepath.Join(aside, storage.SharedDir)); err != nil {
			return "", fmt.Errorf("move %s aside: %w", storage.SharedDir, err)
		}
	}
	// Both directories' entries changed: the move is durable once both
	// are synced.
	if err := vfs.SyncDir(c.fs, aside); err != nil {
		return "", err
	}
	if err := vfs.SyncDir(c.fs, c.st.Dir); err != nil {
		return "", err
	}
	return fmt.Sprintf("moved %d checkpoints aside to %s", len(entries), aside), nil
}
