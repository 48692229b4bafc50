package file

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

func init() {
	connector.Register("file", committer{})
	connector.RegisterInput("file", input{})
}

// committer commits and cleans up the part files of file sinks.
type committer struct{}

// Commit renames the pending part files of a sink subtask to their final
// names, in the sink's directory as this run's settings n have it (or as
// the checkpoint's run had it, for a sink this version no longer has). A
// file renamed before (the checkpoint is committed again on recovery) is
// skipped.
func (committer) Commit(fsys vfs.FS, n *config.NodeConfig, s storage.SinkState) error {
	path := s.Path
	if n != nil {
		path = n.Option("path")
	}
	dir, err := sinkDir(path)
	if err != nil {
		return fmt.Errorf("commit sink subtask %d: %w", s.Subtask, err)
	}
	var errs []error
	renamed := false
	for _, p := range s.Pending {
		if !isName(p.Pending) || !isName(p.Final) {
			errs = append(errs, fmt.Errorf("commit %q: not a file name in the sink's directory", p.Final))
			continue
		}
		final := filepath.Join(dir, p.Final)
		err := fsys.Rename(filepath.Join(dir, p.Pending), final)
		if err == nil {
			renamed = true
			continue
		}
		if _, serr := fsys.Stat(final); serr == nil && errors.Is(err, fs.ErrNotExist) {
			continue // committed before
		}
		errs = append(errs, fmt.Errorf("commit %s: %w", final, err))
	}
	if renamed {
		if err := vfs.SyncDir(fsys, dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sinkDir is the directory a sink's path names: relative to the working
// directory of this run. Checkpoints hold the names of the files in it,
// never the directory, so that a moved or copied job folder (and working
// directory) commits its own files.
func sinkDir(path string) (string, error) {
	if path == "" {
		return "", errors.New("the sink's path is empty")
	}
	return filepath.Abs(path)
}

// isName reports whether name is a file name, not a path: a checkpoint
// names only files in a sink's directory.
func isName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.Base(name) == name
}

// Clean removes from sink n's directory the files that no completed
// checkpoint commits: in-progress and pending files, and, when resuming,
// committed files newer than the checkpoint (from a newer one that was
// found damaged), also those of subtasks the checkpoint does not know (a
// newer one ran with more). Starting from the beginning, the sink's
// earlier output is removed: the run replaces it.
func (committer) Clean(fsys vfs.FS, n *config.NodeConfig, committed *storage.NodeState) (string, error) {
	dir, err := sinkDir(n.Option("path"))
	if err != nil {
		return "", err
	}
	var next map[int]uint64
	if committed != nil {
		next = map[int]uint64{}
		for _, s := range committed.Sinks {
			next[s.Subtask] = s.NextSeq
		}
	}
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	removed := 0
	for _, e := range entries {
		sub, seq, hidden, ok := parsePartName(e.Name())
		if !ok {
			continue
		}
		stale := hidden || next == nil
		if !stale {
			// Every checkpoint lists every subtask that ever committed
			// a file of its lineage (retired ones too), so a subtask it
			// does not know committed nothing in it.
			limit, known := next[sub]
			stale = !known || seq >= limit
		}
		if !stale {
			continue
		}
		if err := fsys.Remove(filepath.Join(dir, e.Name())); err != nil {
			return "", err
		}
		removed++
	}
	if removed == 0 {
		return "", nil
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return "", err
	}
	what := "part files that no checkpoint commits (written after the checkpoint this run resumes from)"
	if next == nil {
		what = "part files of an earlier run"
	}
	return fmt.Sprintf("%d %s from %s", removed, what, dir), nil
}

// parsePartName reads a sink file name: part-SUB-SEQ when committed,
// .part-SUB-SEQ.inprogress or .part-SUB-SEQ.pending before. The numbers
// may be zero-padded (partName) or not (what earlier versions wrote), so
// that cleaning up recognises the files of either.
func parsePartName(name string) (sub int, seq uint64, hidden, ok bool) {
	base := name
	if strings.HasPrefix(name, ".") {
		hidden = true
		base = strings.TrimPrefix(name, ".")
		if b, cut := strings.CutSuffix(base, ".inprogress"); cut {
			base = b
		} else if b, cut := strings.CutSuffix(base, ".pending"); cut {
			base = b
		} else {
			return 0, 0, false, false
		}
	}
	rest, cut := strings.CutPrefix(base, "part-")
	if !cut {
		return 0, 0, false, false
	}
	subText, seqText, cut := strings.Cut(rest, "-")
	if !cut {
		return 0, 0, false, false
	}
	s, err1 := strconv.Atoi(subText)
	q, err2 := strconv.ParseUint(seqText, 10, 64)
	if err1 != nil || err2 != nil || !digits(subText) || !digits(seqText) {
		return 0, 0, false, false
	}
	return s, q, hidden, true
}

// digits reports whether s is decimal digits only: Atoi also takes a sign.
func digits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}
