package file

import (
	"fmt"
	"path/filepath"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// MoveAside moves sink n's part files, committed or not, into the hidden
// folder .aside-TAG (.aside-TAG-2, ... when that exists) of its directory: a run that starts over (run --fresh)
// replaces the output without deleting the earlier one. Readers of the
// output skip hidden names.
func (committer) MoveAside(fsys vfs.FS, n *config.NodeConfig, tag string) (string, error) {
	dir, err := filepath.Abs(n.Option("path"))
	if err != nil {
		return "", err
	}
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return "", err
	}
	earlier := checkpoint.AsideCount(fsys, dir, ".aside-")
	aside := vfs.Unused(fsys, filepath.Join(dir, ".aside-"+tag))
	moved := 0
	for _, e := range entries {
		if _, _, _, ok := parsePartName(e.Name()); !ok {
			continue
		}
		if moved == 0 {
			if err := vfs.MkdirAllDurable(fsys, aside); err != nil {
				return "", err
			}
		}
		if err := fsys.Rename(filepath.Join(dir, e.Name()), filepath.Join(aside, e.Name())); err != nil {
			return "", fmt.Errorf("move %s aside: %w", e.Name(), err)
		}
		moved++
	}
	if moved == 0 {
		return "", nil
	}
	if err := vfs.SyncDir(fsys, aside); err != nil {
		return "", err
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return "", err
	}
	return checkpoint.MovedAside(moved, "file", aside, earlier, dir, ".aside-*"), nil
}
