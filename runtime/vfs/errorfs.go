package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// ErrInjected is the error an Injector returns when it was given none.
var ErrInjected = errors.New("injected error")

// OpKind is a kind of operation that an ErrorFS can fail.
type OpKind int

// The operations of an FS and of its Files. OpWrite, OpSync, OpClose,
// OpRead (Read and ReadAt) and OpStat also name the methods of a File; a
// Sync of a directory opened with OpenDir is an OpSync of the directory.
const (
	OpCreate OpKind = iota
	OpOpen
	OpOpenDir
	OpWrite
	OpSync
	OpClose
	OpRename
	OpRemove
	OpRemoveAll
	OpMkdirAll
	OpReadDir
	OpStat
	OpRead
)

var opNames = [...]string{
	OpCreate:    "create",
	OpOpen:      "open",
	OpOpenDir:   "open-dir",
	OpWrite:     "write",
	OpSync:      "sync",
	OpClose:     "close",
	OpRename:    "rename",
	OpRemove:    "remove",
	OpRemoveAll: "remove-all",
	OpMkdirAll:  "mkdir-all",
	OpReadDir:   "read-dir",
	OpStat:      "stat",
	OpRead:      "read",
}

func (k OpKind) String() string {
	if k >= 0 && int(k) < len(opNames) {
		return opNames[k]
	}
	return "op(" + strconv.Itoa(int(k)) + ")"
}

// Op is an operation about to be done by an ErrorFS.
type Op struct {
	Kind OpKind
	// Path is the name the operation was called with: for a File method,
	// the name the file was opened with; for OpRename, the old name.
	Path string
	// NewPath is the new name of an OpRename, "" for other kinds.
	NewPath string
}

// An Injector decides which operations of an ErrorFS fail. MaybeError is
// called before each operation, possibly from several goroutines at once;
// a non-nil error fails the operation without doing it.
type Injector interface {
	MaybeError(op Op) error
}

// InjectorFunc is an Injector from a function.
type InjectorFunc func(op Op) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// matches reports whether op is of kind and its path or new path contains
// sub (with forward slashes, so that tests can match "chk-1/MANIFEST" on
// any OS). An empty sub matches every path.
func (op Op) matches(kind OpKind, sub string) bool {
	if op.Kind != kind {
		return false
	}
	return strings.Contains(filepath.ToSlash(op.Path), sub) ||
		op.NewPath != "" && strings.Contains(filepath.ToSlash(op.NewPath), sub)
}

// OnceAt returns an Injector that fails the first operation of kind whose
// path contains pathSubstring (for OpRename, the old or the new name) with
// err, or ErrInjected if err is nil, and lets every other operation through.
func OnceAt(kind OpKind, pathSubstring string, err error) Injector {
	if err == nil {
		err = ErrInjected
	}
	return &onceAt{kind: kind, sub: pathSubstring, err: err}
}

type onceAt struct {
	kind  OpKind
	sub   string
	err   error
	fired atomic.Bool
}

func (o *onceAt) MaybeError(op Op) error {
	if op.matches(o.kind, o.sub) && o.fired.CompareAndSwap(false, true) {
		return o.err
	}
	return nil
}

// Always returns an Injector that fails every operation of kind whose path
// contains pathSubstring, with err or ErrInjected if err is nil.
func Always(kind OpKind, pathSubstring string, err error) Injector {
	if err == nil {
		err = ErrInjected
	}
	return InjectorFunc(func(op Op) error {
		if op.matches(kind, pathSubstring) {
			return err
		}
		return nil
	})
}

// NewErrorFS returns an FS that asks inject before each operation, on the
// FS and on the Files it opens, and fails the operation with the error the
// Injector returns, wrapped in an *fs.PathError (*os.LinkError for Rename)
// whose Op is the kind's name. A failed operation is not done, except
// Close: the inner file is closed anyway, as a failing close(2) releases
// the descriptor too.
func NewErrorFS(inner FS, inject Injector) FS {
	return &errorFS{inner: inner, inject: inject}
}

type errorFS struct {
	inner  FS
	inject Injector
}

func (e *errorFS) maybe(kind OpKind, name string) error {
	if err := e.inject.MaybeError(Op{Kind: kind, Path: name}); err != nil {
		return &fs.PathError{Op: kind.String(), Path: name, Err: err}
	}
	return nil
}

func (e *errorFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e}, nil
}

func (e *errorFS) Create(name string) (File, error) {
	if err := e.maybe(OpCreate, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.Create(name))
}

func (e *errorFS) Open(name string) (File, error) {
	if err := e.maybe(OpOpen, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.Open(name))
}

func (e *errorFS) OpenDir(name string) (File, error) {
	if err := e.maybe(OpOpenDir, name); err != nil {
		return nil, err
	}
	return e.wrap(e.inner.OpenDir(name))
}

func (e *errorFS) Rename(oldname, newname string) error {
	if err := e.inject.MaybeError(Op{Kind: OpRename, Path: oldname, NewPath: newname}); err != nil {
		return &os.LinkError{Op: OpRename.String(), Old: oldname, New: newname, Err: err}
	}
	return e.inner.Rename(oldname, newname)
}

func (e *errorFS) Remove(name string) error {
	if err := e.maybe(OpRemove, name); err != nil {
		return err
	}
	return e.inner.Remove(name)
}

func (e *errorFS) RemoveAll(name string) error {
	if err := e.maybe(OpRemoveAll, name); err != nil {
		return err
	}
	return e.inner.RemoveAll(name)
}

func (e *errorFS) MkdirAll(name string, perm os.FileMode) error {
	if err := e.maybe(OpMkdirAll, name); err != nil {
		return err
	}
	return e.inner.MkdirAll(name, perm)
}

func (e *errorFS) ReadDir(name string) ([]os.DirEntry, error) {
	if err := e.maybe(OpReadDir, name); err != nil {
		return nil, err
	}
	return e.inner.ReadDir(name)
}

func (e *errorFS) Lock(name string) (io.Closer, error) { return e.inner.Lock(name) }

func (e *errorFS) Stat(name string) (os.FileInfo, error) {
	if err := e.maybe(OpStat, name); err != nil {
		return nil, err
	}
	return e.inner.Stat(name)
}

type errorFile struct {
	File
	fs *errorFS
}

func (f *errorFile) Read(p []byte) (int, error) {
	if err := f.fs.maybe(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *errorFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.maybe(OpRead, f.Name()); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *errorFile) Write(p []byte) (int, error) {
	if err := f.fs.maybe(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *errorFile) Sync() error {
	if err := f.fs.maybe(OpSync, f.Name()); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *errorFile) Close() error {
	if err := f.fs.maybe(OpClose, f.Name()); err != nil {
		f.File.Close()
		return err
	}
	return f.File.Close()
}

func (f *errorFile) Stat() (os.FileInfo, error) {
	if err := f.fs.maybe(OpStat, f.Name()); err != nil {
		return nil, err
	}
	return f.File.Stat()
}
