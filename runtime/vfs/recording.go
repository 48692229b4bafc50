package vfs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// NewRecordingFS returns an FS that does every operation on inner and
// writes a line to w for each one that changes the filesystem, in the order
// they were called:
//
//	create P          FS.Create
//	write P N         File.Write of N bytes, one line per call
//	sync P            File.Sync of a file
//	close P           File.Close of a file opened by Create
//	sync-dir P        File.Sync of a directory opened by OpenDir
//	rename P Q        FS.Rename
//	remove P          FS.Remove
//	removeall P       FS.RemoveAll
//	mkdirall P        FS.MkdirAll
//
// A failed operation's line ends with " (failed)". Reads (Open, Read,
// ReadDir, Stat, OpenDir itself, closing what was opened for reading) are
// not logged. Paths are shown relative to root, with forward slashes ("."
// for root itself); with an empty root, as given. Lines are written whole,
// under a lock, so goroutines may share the FS; the log is deterministic
// when the caller's order is.
func NewRecordingFS(inner FS, w io.Writer, root string) FS {
	return &recordingFS{inner: inner, w: w, root: root}
}

type recordingFS struct {
	inner FS
	root  string

	mu sync.Mutex // guards w
	w  io.Writer
}

func (r *recordingFS) rel(name string) string {
	if r.root != "" {
		if rel, err := filepath.Rel(r.root, name); err == nil {
			name = rel
		}
	}
	return filepath.ToSlash(name)
}

func (r *recordingFS) log(err error, op string, names ...string) {
	var b strings.Builder
	b.WriteString(op)
	for _, n := range names {
		b.WriteByte(' ')
		b.WriteString(n)
	}
	if err != nil {
		b.WriteString(" (failed)")
	}
	b.WriteByte('\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	io.WriteString(r.w, b.String())
}

// What a recordingFile was opened with decides which of its methods are
// logged.
type openKind int

const (
	openCreate openKind = iota
	openRead
	openDir
)

func (r *recordingFS) Create(name string) (File, error) {
	f, err := r.inner.Create(name)
	r.log(err, "create", r.rel(name))
	if err != nil {
		return nil, err
	}
	return &recordingFile{File: f, fs: r, path: r.rel(name), kind: openCreate}, nil
}

func (r *recordingFS) Open(name string) (File, error) {
	f, err := r.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &recordingFile{File: f, fs: r, path: r.rel(name), kind: openRead}, nil
}

func (r *recordingFS) OpenDir(name string) (File, error) {
	f, err := r.inner.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &recordingFile{File: f, fs: r, path: r.rel(name), kind: openDir}, nil
}

func (r *recordingFS) Rename(oldname, newname string) error {
	err := r.inner.Rename(oldname, newname)
	r.log(err, "rename", r.rel(oldname), r.rel(newname))
	return err
}

func (r *recordingFS) Remove(name string) error {
	err := r.inner.Remove(name)
	r.log(err, "remove", r.rel(name))
	return err
}

func (r *recordingFS) RemoveAll(name string) error {
	err := r.inner.RemoveAll(name)
	r.log(err, "removeall", r.rel(name))
	return err
}

func (r *recordingFS) MkdirAll(name string, perm os.FileMode) error {
	err := r.inner.MkdirAll(name, perm)
	r.log(err, "mkdirall", r.rel(name))
	return err
}

func (r *recordingFS) ReadDir(name string) ([]os.DirEntry, error) { return r.inner.ReadDir(name) }
func (r *recordingFS) Stat(name string) (os.FileInfo, error)      { return r.inner.Stat(name) }

// Lock is not recorded: a lock makes nothing durable.
func (r *recordingFS) Lock(name string) (io.Closer, error) { return r.inner.Lock(name) }

type recordingFile struct {
	File
	fs   *recordingFS
	path string
	kind openKind
}

func (f *recordingFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.fs.log(err, "write", f.path, fmt.Sprint(len(p)))
	return n, err
}

func (f *recordingFile) Sync() error {
	err := f.File.Sync()
	if f.kind == openDir {
		f.fs.log(err, "sync-dir", f.path)
	} else {
		f.fs.log(err, "sync", f.path)
	}
	return err
}

func (f *recordingFile) Close() error {
	err := f.File.Close()
	if f.kind == openCreate {
		f.fs.log(err, "close", f.path)
	}
	return err
}
