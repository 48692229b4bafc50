package checkpoint

import (
	"fmt"
	"path/filepath"
	"strings"

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
	earlier := AsideCount(c.fs, c.st.Dir, "aside-")
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
	return MovedAside(len(entries), "checkpoint", aside, earlier, c.st.Dir, "aside-*"), nil
}

// AsideCount counts the folders of dir whose names start with prefix:
// what earlier runs that started over left there.
func AsideCount(fsys vfs.FS, dir, prefix string) int {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			n++
		}
	}
	return n
}

// MovedAside is the line of a move aside: n things (a checkpoint, a
// file) moved to the folder aside, and how many earlier runs left theirs
// aside in dir already (the folders that pattern names), if any:
// nothing is ever deleted, so a job started over again and again keeps
// every run's checkpoints and output until the user removes them.
func MovedAside(n int, thing, aside string, earlier int, dir, pattern string) string {
	line := fmt.Sprintf("moved %d %ss aside to %s", n, thing, aside)
	if n == 1 {
		line = fmt.Sprintf("moved 1 %s aside to %s", thing, aside)
	}
	switch earlier {
	case 0:
		return line
	case 1:
		return fmt.Sprintf("%s; 1 earlier run's %ss are aside in %s too (%s): remove the folders you no longer need", line, thing, dir, pattern)
	}
	return fmt.Sprintf("%s; %d earlier runs' %ss are aside in %s too (%s): remove the folders you no longer need", line, earlier, thing, dir, pattern)
}
