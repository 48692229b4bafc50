package storage

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// Storage is a checkpoint directory.
type Storage struct {
	FS  vfs.FS
	Dir string
}

// FolderName is the name of checkpoint id's folder: chk-000007.
func FolderName(id int64) string { return fmt.Sprintf("chk-%06d", id) }

// Path is the path of checkpoint id's folder, or of a file in it.
func (s *Storage) Path(id int64, name ...string) string {
	return filepath.Join(append([]string{s.Dir, FolderName(id)}, name...)...)
}

// Prepare creates the folder of checkpoint id and makes its entry durable.
func (s *Storage) Prepare(id int64) error {
	if err := vfs.MkdirAllDurable(s.FS, s.Dir); err != nil {
		return err
	}
	if err := s.FS.MkdirAll(s.Path(id), 0o755); err != nil {
		return err
	}
	return vfs.SyncDir(s.FS, s.Dir)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CreateState creates state file name of checkpoint id, for the sections
// of key groups [start, start+sections).
func (s *Storage) CreateState(id int64, name string, start, sections int) (*StateWriter, error) {
	return CreateState(s.FS, s.Path(id, name), start, sections)
}

// SharedDir is the folder of a checkpoint directory that holds the files
// several checkpoints share.
const SharedDir = "shared"

// SharedPath is the path of the shared file name.
func (s *Storage) SharedPath(name string) string { return filepath.Join(s.Dir, SharedDir, name) }

// CreateShared creates the shared state file name, for the sections of
// key groups [start, start+sections). Its directory entry is durable once
// the manifest of a checkpoint that names it is (Commit syncs the
// folder).
func (s *Storage) CreateShared(name string, start, sections int) (*StateWriter, error) {
	if err := s.MakeShared(); err != nil {
		return nil, err
	}
	return CreateState(s.FS, s.SharedPath(name), start, sections)
}

// MakeShared creates the shared folder, durably, if it is missing.
func (s *Storage) MakeShared() error {
	return vfs.MkdirAllDurable(s.FS, filepath.Join(s.Dir, SharedDir))
}

// Sweep removes the shared files that keep does not name: those of no
// retained checkpoint (given up, failed, pruned, or left by a crash). It
// returns the names removed.
func (s *Storage) Sweep(keep map[string]bool) ([]string, error) {
	dir := filepath.Join(s.Dir, SharedDir)
	entries, err := s.FS.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if keep[e.Name()] {
			continue
		}
		if err := s.FS.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// SharedFiles returns the names of the shared files m refers to.
func (m *Manifest) SharedFiles() []string {
	var names []string
	for _, n := range m.Nodes {
		for _, f := range n.Files {
			if f.Shared {
				names = append(names, f.Name)
			}
		}
	}
	return names
}

// Commit writes the manifest of a checkpoint whose state files are all
// written: the checkpoint is complete once it returns.
// A manifest without a format is written in this program's.
func (s *Storage) Commit(m *Manifest) error {
	return s.commitIn(m, s.Path(m.ID))
}

// commitIn writes manifest m into folder, after syncing the folder (and
// the shared folder, when m names shared files).
func (s *Storage) commitIn(m *Manifest, folder string) error {
	if m.Format == 0 {
		m.Format = manifestFormat
	}
	// The state files' directory entries must be durable before the
	// manifest that names them.
	if err := vfs.SyncDir(s.FS, folder); err != nil {
		return err
	}
	if len(m.SharedFiles()) > 0 {
		if err := vfs.SyncDir(s.FS, filepath.Join(s.Dir, SharedDir)); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	data = fmt.Appendf(data, "crc32c %08x\n", crc32.Checksum(data, castagnoli))
	return vfs.AtomicWriteFile(s.FS, filepath.Join(folder, "MANIFEST"), data)
}

// Entry is one folder of the checkpoint directory.
type Entry struct {
	ID int64
	// Complete is set when the folder has a manifest.
	Complete bool
}

// MaxID is the largest checkpoint id: ids count up from 1, and a folder
// with a larger number (chk-9223372036854775807, say, made by hand) is not
// taken for a checkpoint, so that the next id cannot overflow.
const MaxID = 1e15

// List returns the checkpoint folders, oldest first.
func (s *Storage) List() ([]Entry, error) {
	dirs, err := s.FS.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, d := range dirs {
		idText, ok := strings.CutPrefix(d.Name(), "chk-")
		if !ok || !d.IsDir() {
			continue
		}
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil || id < 1 || id > MaxID {
			continue
		}
		_, err = s.FS.Stat(s.Path(id, "MANIFEST"))
		out = append(out, Entry{ID: id, Complete: err == nil})
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// ReadManifest reads and verifies the manifest of checkpoint id.
func (s *Storage) ReadManifest(id int64) (*Manifest, error) {
	return readManifest(s.FS, s.Path(id, "MANIFEST"))
}

func readManifest(fsys vfs.FS, path string) (*Manifest, error) {
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndex(data, []byte("crc32c "))
	if i < 0 {
		return nil, fmt.Errorf("%s: no checksum line", path)
	}
	var want uint32
	if _, err := fmt.Sscanf(string(data[i:]), "crc32c %08x\n", &want); err != nil || string(data[i:]) != fmt.Sprintf("crc32c %08x\n", want) {
		return nil, fmt.Errorf("%s: bad checksum line", path)
	}
	if got := crc32.Checksum(data[:i], castagnoli); got != want {
		return nil, fmt.Errorf("%s: checksum mismatch (%08x, want %08x): the file is damaged", path, got, want)
	}
	var m Manifest
	if err := json.Unmarshal(data[:i], &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format == 1 {
		if err := upgradeFormat1(&m, data[:i]); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if m.Format == 2 {
		m.Format = manifestFormat
	}
	if m.Format != manifestFormat {
		return nil, fmt.Errorf("%s: checkpoint format %d, this program reads formats 1 to %d", path, m.Format, manifestFormat)
	}
	return &m, nil
}

// upgradeFormat1 turns a manifest of format 1, whose sink states hold the
// sink's absolute directory and absolute paths of its files, into format
// 2: the files are named within the directory, which the run resolves
// from its settings, and the directory is kept only for a sink the job no
// longer has.
func upgradeFormat1(m *Manifest, data []byte) error {
	var old struct {
		Nodes []struct {
			Sinks []struct {
				Dir string `json:"dir"`
			} `json:"sinks"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		return err
	}
	for i := range m.Nodes {
		for j := range m.Nodes[i].Sinks {
			s := &m.Nodes[i].Sinks[j]
			s.Path = old.Nodes[i].Sinks[j].Dir
			for k := range s.Pending {
				p := &s.Pending[k]
				p.Pending, p.Final = filepath.Base(p.Pending), filepath.Base(p.Final)
			}
		}
	}
	m.Format = manifestFormat
	return nil
}

// Loaded is a verified checkpoint: its manifest, whose state files are
// intact. The files are read when a subtask restores from them, one
// section at a time, and the checksum is checked again as they are read.
type Loaded struct {
	Manifest *Manifest
	Dir      string
	fs       vfs.FS
}

// Load reads checkpoint id and verifies every file against its checksum.
func (s *Storage) Load(id int64) (*Loaded, error) {
	return LoadDir(s.FS, s.Path(id))
}

// LoadDir reads the checkpoint in folder dir (a chk-NNNNNN folder named
// on the command line) and verifies every file against its checksum,
// reading each as a stream: nothing of it is kept.
func LoadDir(fsys vfs.FS, dir string) (*Loaded, error) {
	m, err := readManifest(fsys, filepath.Join(dir, "MANIFEST"))
	if err != nil {
		return nil, err
	}
	l := &Loaded{Manifest: m, Dir: dir, fs: fsys}
	for _, n := range m.Nodes {
		for _, f := range n.Files {
			verify := VerifyFile
			if f.Kind == KindPebble {
				verify = VerifyRaw
			}
			if err := verify(fsys, l.Path(f), f.Size, f.CRC); err != nil {
				return nil, err
			}
		}
	}
	return l, nil
}

// Path is the path of a state file of the checkpoint: in its folder, or
// in the folder shared/ beside it.
func (l *Loaded) Path(f StateFile) string {
	if f.Shared {
		return filepath.Join(filepath.Dir(l.Dir), SharedDir, f.Name)
	}
	return filepath.Join(l.Dir, f.Name)
}

// Open opens a state file of the checkpoint for reading section by
// section.
func (l *Loaded) Open(f StateFile) (*StateReader, error) {
	return OpenState(l.fs, l.Path(f), f.Size, f.CRC)
}

// OpenMapped is Open of a reader whose sections are the file mapped into
// memory (OpenStateMapped): for readers that keep nothing of a section
// once they asked for the next one or closed the reader.
func (l *Loaded) OpenMapped(f StateFile) (*StateReader, error) {
	return OpenStateMapped(l.fs, l.Path(f), f.Size, f.CRC)
}

// Remove deletes checkpoint id.
func (s *Storage) Remove(id int64) error {
	return s.FS.RemoveAll(s.Path(id))
}

// Size prints a byte count the way people read it.
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
