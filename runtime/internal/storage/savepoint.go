package storage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// A savepoint is a checkpoint that a person asked for, kept until a person
// deletes it: one folder that holds its MANIFEST (with Savepoint set) and
// every state file it names, by name, in the folder itself. It refers to
// nothing outside (no shared files, no paths: sinks' pending files are
// committed before a savepoint is written, and left out of it), so a moved
// or copied savepoint restores. Its keyed state is canonical: the
// memory backend's full key-group state files, whichever backend wrote it.
//
// A savepoint is written into a hidden folder (.savepoint-...inprogress),
// its manifest last, and the folder renamed to its name once durable: a
// savepoint folder without the leading dot is whole, and a crash leaves at
// most a hidden folder, which no listing shows and no restore reads.

// SavepointsDir is the default folder of savepoints in a checkpoint
// directory.
const SavepointsDir = "savepoints"

// SavepointPrefix starts the name of every savepoint folder.
const SavepointPrefix = "savepoint-"

// inprogressSuffix ends the hidden folder of a savepoint being written.
const inprogressSuffix = ".inprogress"

// WriteSavepoint copies the complete checkpoint m, whose folder is src
// (its shared files in the folder shared/ beside it), into a new savepoint
// folder in dir, and returns the savepoint's path. The checkpoint's state
// must be canonical (no Pebble store files: a savepoint checkpoint writes
// its Pebble state as state files).
func WriteSavepoint(fsys vfs.FS, m *Manifest, src, dir string) (string, error) {
	name, err := savepointName(m.ID)
	if err != nil {
		return "", err
	}
	if err := vfs.MkdirAllDurable(fsys, dir); err != nil {
		return "", err
	}
	tmp := filepath.Join(dir, "."+name+inprogressSuffix)
	if err := fsys.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			fsys.RemoveAll(tmp)
		}
	}()
	from := &Loaded{Manifest: m, Dir: src, fs: fsys}
	sp := *m
	sp.Savepoint, sp.Final = true, false
	var idBytes [8]byte
	if _, err := rand.Read(idBytes[:]); err != nil {
		return "", err
	}
	sp.SavepointID = hex.EncodeToString(idBytes[:])
	sp.Nodes = slices.Clone(m.Nodes)
	sp.Stats.BytesWritten = 0
	for i := range sp.Nodes {
		n := &sp.Nodes[i]
		n.Files = slices.Clone(n.Files)
		for k := range n.Files {
			f := &n.Files[k]
			if f.Kind == KindPebble {
				return "", fmt.Errorf("checkpoint %d holds the state of %s as Pebble store files, not in canonical form", m.ID, n.Name)
			}
			if err := copyFile(fsys, from.Path(*f), filepath.Join(tmp, f.Name)); err != nil {
				return "", err
			}
			f.Shared = false
			sp.Stats.BytesWritten += f.Size
		}
		// The sinks' files are committed: what carries on is the number
		// of each subtask's next file (and a sink's path, for one the next
		// version no longer has).
		n.Sinks = slices.Clone(n.Sinks)
		for k := range n.Sinks {
			n.Sinks[k].Pending, n.Sinks[k].Transactions = nil, nil
		}
	}
	if err := (&Storage{FS: fsys}).commitIn(&sp, tmp); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := fsys.Rename(tmp, path); err != nil {
		return "", err
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return "", err
	}
	ok = true
	return path, nil
}

// savepointName names the savepoint of checkpoint id: savepoint-000007-
// and 8 random hex digits, so that two savepoints of one id (two jobs
// forked from one savepoint) never collide.
func savepointName(id int64) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%06d-%s", SavepointPrefix, id, hex.EncodeToString(b[:])), nil
}

// copyFile copies src to dst and makes dst durable.
func copyFile(fsys vfs.FS, src, dst string) error {
	in, err := fsys.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsys.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// SavepointEntry is one savepoint of a folder.
type SavepointEntry struct {
	Path string
	// Manifest is nil when it cannot be read (Err says why).
	Manifest *Manifest
	Err      error
}

// ListSavepoints returns the savepoints in dir, by name: folders whose
// names start with savepoint- (never a hidden one being written).
func ListSavepoints(fsys vfs.FS, dir string) ([]SavepointEntry, error) {
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SavepointEntry
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), SavepointPrefix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		m, err := readManifest(fsys, filepath.Join(p, "MANIFEST"))
		out = append(out, SavepointEntry{Path: p, Manifest: m, Err: err})
	}
	return out, nil
}

// LoadSavepoint reads the savepoint in folder dir and verifies every file
// against its checksum. A folder that is not a savepoint (a checkpoint's,
// say) is refused, and so is one being written.
func LoadSavepoint(fsys vfs.FS, dir string) (*Loaded, error) {
	if strings.HasSuffix(filepath.Clean(dir), inprogressSuffix) {
		return nil, fmt.Errorf("%s is a savepoint still being written (or one a crash interrupted): it cannot be restored", dir)
	}
	l, err := LoadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	if !l.Manifest.Savepoint {
		return nil, fmt.Errorf("%s is a checkpoint, not a savepoint: resume from it with --from-checkpoint", dir)
	}
	for _, n := range l.Manifest.Nodes {
		for _, f := range n.Files {
			if f.Shared || f.Kind == KindPebble || strings.ContainsAny(f.Name, `/\`) {
				return nil, fmt.Errorf("%s: state file %s of %s is not a savepoint's own file", dir, f.Name, n.Name)
			}
		}
	}
	return l, nil
}
