package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
)

// File is an open file or directory of an FS. *os.File implements it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes the file's contents durable; on a directory (see
	// FS.OpenDir) it makes the directory's entries durable.
	Sync() error
	Stat() (os.FileInfo, error)
	// Name is the name the file was opened with.
	Name() string
}

// FS is the filesystem interface. Names are paths with the host's
// separator, as with package os.
type FS interface {
	// Create creates the file name, or truncates it if it exists, and opens
	// it for writing (reading may work too).
	Create(name string) (File, error)
	// Open opens the file or directory name for reading.
	Open(name string) (File, error)
	// OpenDir opens the directory name so that its Sync makes the
	// directory's entries durable. It fails when name is not a directory.
	OpenDir(name string) (File, error)
	// Rename renames oldname to newname, replacing newname if it is a file.
	Rename(oldname, newname string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes name and everything under it; a missing name is
	// not an error.
	RemoveAll(name string) error
	// MkdirAll creates the directory name and any missing parents.
	MkdirAll(name string, perm os.FileMode) error
	// ReadDir returns the entries of the directory name, sorted by name.
	ReadDir(name string) ([]os.DirEntry, error)
	Stat(name string) (os.FileInfo, error)
	// Lock takes an exclusive lock on the file name (created if missing),
	// held until the returned Closer is closed or the process ends: a
	// killed process never leaves a lock behind. When another holder has
	// it, Lock fails at once with a *LockedError.
	Lock(name string) (io.Closer, error)
}

// LockedError is the error of Lock when another holder has the lock.
type LockedError struct {
	Path string
	// Holder says who holds it ("pid 1234"), "" when that is unknown.
	Holder string
}

func (e *LockedError) Error() string {
	if e.Holder == "" {
		return e.Path + " is locked by another process"
	}
	return e.Path + " is locked by another process (" + e.Holder + ")"
}

// WriteFileSync creates (or truncates) name, writes data, fsyncs the file
// and closes it. It does not sync the parent directory: a new file's entry
// is durable only after SyncDir of its parent.
func WriteFileSync(fs FS, name string, data []byte) error {
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// AtomicWriteFile replaces the contents of name with data so that a crash
// leaves either the old contents or the new ones, never a mix: it writes
// name+".tmp", fsyncs and closes it, renames it to name and fsyncs the
// parent directory. When it returns nil, the new contents are durable.
// This is the commit-point write (a checkpoint's manifest).
//
// On failure after the temporary file was created, it removes the
// temporary file (ignoring the error of that removal).
func AtomicWriteFile(fs FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		fs.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := fs.Rename(tmp, name); err != nil {
		return fail(err)
	}
	return SyncDir(fs, filepath.Dir(name))
}

// SyncDir fsyncs the directory dir, which makes its entries (files created,
// renamed or removed in it) durable.
func SyncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// ReadFile returns the contents of the file name.
func ReadFile(fs FS, name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		b.Grow(int(info.Size()) + 1)
	}
	if _, err := b.ReadFrom(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MkdirAllDurable is MkdirAll that also syncs the parent of every
// directory it creates: a file is durable only when every directory entry
// on its path is, and a checkpoint directory (or a sink's) made by the
// first run of a job is new.
//
// A call that fails after its MkdirAll (a sync failed), or whose MkdirAll
// failed midway, leaves directories whose entries may not be durable, and
// which a later call finds existing. They are remembered, per FS, until a
// call for a path through them has synced their parents. (What a process
// that ended left unsynced is not known to the next one.)
func MkdirAllDurable(fsys FS, dir string) error {
	dir = filepath.Clean(dir)
	var missing []string
	exists := false
	for d := dir; ; d = filepath.Dir(d) {
		info, err := fsys.Stat(d)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			exists = d == dir && err == nil && info.IsDir()
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	// The missing directories count as unsynced from now on: a call that
	// runs meanwhile and finds them made by this one syncs them too.
	todo := unsynced.add(fsys, dir, missing) // shallowest first
	if exists && len(todo) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range todo {
		if err := SyncDir(fsys, filepath.Dir(d)); err != nil {
			return err
		}
		unsynced.done(fsys, d)
	}
	return nil
}

// unsynced holds the directories that MkdirAllDurable created, or is
// creating, and whose parents no call has synced since.
var unsynced = unsyncedDirs{dirs: map[fsDir]bool{}}

type unsyncedDirs struct {
	mu   sync.Mutex
	dirs map[fsDir]bool
}

// fsDir is a directory of an FS. FSes are told apart by ==; those whose
// values cannot be compared share the key nil, which costs them only
// syncs of each other's directories.
type fsDir struct {
	fs  FS
	dir string
}

func dirKey(fsys FS, dir string) fsDir {
	if !reflect.TypeOf(fsys).Comparable() {
		fsys = nil
	}
	return fsDir{fsys, dir}
}

// add adds the directories missing and returns those of dir and its
// parents that are unsynced, shallowest first.
func (u *unsyncedDirs) add(fsys FS, dir string, missing []string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, d := range missing {
		u.dirs[dirKey(fsys, d)] = true
	}
	if len(u.dirs) == 0 {
		return nil
	}
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if u.dirs[dirKey(fsys, d)] {
			out = append(out, d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(out)
	return out
}

// done records that the parent of dir was synced after dir was created.
func (u *unsyncedDirs) done(fsys FS, dir string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.dirs, dirKey(fsys, dir))
}

// Unused returns path, or path-2, path-3, ... the first that does not
// exist (cannot be stat'd): a name for a new file or folder that cannot clobber an old one.
func Unused(fsys FS, path string) string {
	name := path
	for i := 2; ; i++ {
		if _, err := fsys.Stat(name); err != nil {
			return name // missing; or unreadable, which the caller then finds
		}
		name = fmt.Sprintf("%s-%d", path, i)
	}
}
