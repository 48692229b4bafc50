package vfs

import (
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MemFS is an FS in memory, safe for concurrent use. Names are cleaned and
// taken from the root of the MemFS, so "a/b", "/a/b" and "./a//b" are the
// same file. Errors are *fs.PathError (or *os.LinkError for Rename) with the
// errno a POSIX filesystem returns, so errors.Is(err, fs.ErrNotExist) works
// as with Default.
//
// A MemFS models durability with two rules, which are what the durable
// write sequence (write, fsync, rename, fsync of the directory) relies on:
//
//   - The contents of a file are volatile until the file's Sync: a crash
//     leaves the contents of its last Sync (empty if it was never synced).
//     Truncation by Create is a change of contents like a write.
//   - A directory entry made or removed by Create, Rename, Remove,
//     RemoveAll or MkdirAll is volatile until the Sync of its directory
//     (opened with OpenDir or Open): a crash leaves the entries of the
//     directory's last Sync, each naming the file or directory it named
//     then, as that file or directory was last synced. The root directory
//     always exists; its entries follow the same rule.
//
// CrashClone applies these rules. Directories are synced independently of
// each other: a file moved between two directories of which only the new
// one was synced is in both after a crash, and one of which only the old
// one was synced is in neither. Ownership, permissions and times are not
// part of the model.
type MemFS struct {
	mu   sync.Mutex
	root *memNode
	// locks are the names locked with Lock. They are held by the process,
	// not stored: a CrashClone has none.
	locks map[string]bool
}

// A memNode is a file or a directory (an inode). Directory entries point to
// nodes, so a renamed or removed node keeps its identity, and an open File
// keeps working on a node that was removed.
type memNode struct {
	dir     bool
	mode    os.FileMode
	modTime time.Time

	// A file: its contents now, and as of its last Sync.
	data, synced []byte

	// A directory: its entries now, and as of its last Sync.
	children, syncedChildren map[string]*memNode
}

func newDirNode(perm os.FileMode) *memNode {
	return &memNode{
		dir:            true,
		mode:           os.ModeDir | perm.Perm(),
		modTime:        time.Now(),
		children:       map[string]*memNode{},
		syncedChildren: map[string]*memNode{},
	}
}

// NewMem returns an empty MemFS: a root directory and nothing else.
func NewMem() *MemFS {
	return &MemFS{root: newDirNode(0o755)}
}

// CrashClone returns the filesystem a machine would find after a power loss
// now: only synced file contents and synced directory entries survive (see
// MemFS). In the clone everything is durable. m is not changed.
func (m *MemFS) CrashClone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &MemFS{root: crashCopy(m.root, map[*memNode]bool{})}
}

// Lock takes the in-memory lock of name; it does not create a file.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	key := path.Join(cleanPath(name)...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[key] {
		return nil, &LockedError{Path: name, Holder: "held in this process"}
	}
	if m.locks == nil {
		m.locks = map[string]bool{}
	}
	m.locks[key] = true
	return memLock{m, key}, nil
}

type memLock struct {
	m   *MemFS
	key string
}

func (l memLock) Close() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	delete(l.m.locks, l.key)
	return nil
}

// crashCopy copies the durable state of n. Independent directory syncs can
// make the durable entries form a cycle (a directory moved into a
// directory that was its child); onPath breaks it by dropping the entry
// that would close the cycle.
func crashCopy(n *memNode, onPath map[*memNode]bool) *memNode {
	c := &memNode{dir: n.dir, mode: n.mode, modTime: n.modTime}
	if !n.dir {
		c.data = slices.Clone(n.synced)
		c.synced = slices.Clone(n.synced)
		return c
	}
	onPath[n] = true
	c.children = map[string]*memNode{}
	for name, child := range n.syncedChildren {
		if !onPath[child] {
			c.children[name] = crashCopy(child, onPath)
		}
	}
	delete(onPath, n)
	c.syncedChildren = maps.Clone(c.children)
	return c
}

// cleanPath returns the components of name from the root; none for the root.
func cleanPath(name string) []string {
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// lookup resolves name: its parent directory, its last component and its
// node (nil when the parent exists but has no such entry). For the root,
// parent is nil and base "". An error is the errno of a missing (ENOENT)
// or non-directory (ENOTDIR) component before the last one.
func (m *MemFS) lookup(name string) (parent *memNode, base string, n *memNode, err error) {
	parts := cleanPath(name)
	if len(parts) == 0 {
		return nil, "", m.root, nil
	}
	dir := m.root
	for _, p := range parts[:len(parts)-1] {
		next := dir.children[p]
		if next == nil {
			return nil, "", nil, syscall.ENOENT
		}
		if !next.dir {
			return nil, "", nil, syscall.ENOTDIR
		}
		dir = next
	}
	base = parts[len(parts)-1]
	return dir, base, dir.children[base], nil
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, base, n, err := m.lookup(name)
	switch {
	case err != nil:
	case n == nil:
		n = &memNode{mode: 0o644, modTime: time.Now()}
		parent.children[base] = n
	case n.dir:
		err = syscall.EISDIR
	default:
		n.data = nil
		n.modTime = time.Now()
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{fs: m, n: n, name: name, read: true, write: true}, nil
}

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) {
	return m.open(name, false)
}

// OpenDir implements FS.
func (m *MemFS) OpenDir(name string) (File, error) {
	return m.open(name, true)
}

func (m *MemFS) open(name string, mustBeDir bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.lookup(name)
	switch {
	case err != nil:
	case n == nil:
		err = syscall.ENOENT
	case mustBeDir && !n.dir:
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &memFile{fs: m, n: n, name: name, read: true}, nil
}

// Rename implements FS. Like os.Rename, it fails with EEXIST when newname
// is an existing directory.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.rename(oldname, newname); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}

func (m *MemFS) rename(oldname, newname string) error {
	oldParent, oldBase, on, err := m.lookup(oldname)
	if err != nil {
		return err
	}
	if on == nil {
		return syscall.ENOENT
	}
	newParent, newBase, nn, err := m.lookup(newname)
	if nn != nil && nn.dir {
		return syscall.EEXIST
	}
	if err != nil {
		return err
	}
	if oldParent == nil || newParent == nil {
		return syscall.EBUSY // the root
	}
	if on == nn {
		return nil
	}
	if on.dir {
		if nn != nil {
			return syscall.ENOTDIR
		}
		oldPath := "/" + strings.Join(cleanPath(oldname), "/") + "/"
		if strings.HasPrefix("/"+strings.Join(cleanPath(newname), "/"), oldPath) {
			return syscall.EINVAL // into itself
		}
	}
	delete(oldParent.children, oldBase)
	newParent.children[newBase] = on
	return nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, base, n, err := m.lookup(name)
	switch {
	case err != nil:
	case n == nil:
		err = syscall.ENOENT
	case parent == nil:
		err = syscall.EBUSY
	case n.dir && len(n.children) > 0:
		err = syscall.ENOTEMPTY
	default:
		delete(parent.children, base)
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// RemoveAll implements FS. The removed tree is unlinked, not destroyed: its
// durable state stays reachable from the parent's last Sync until the
// parent is synced again.
func (m *MemFS) RemoveAll(name string) error {
	if name == "." || strings.HasSuffix(filepath.ToSlash(name), "/.") {
		return &fs.PathError{Op: "RemoveAll", Path: name, Err: syscall.EINVAL}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, base, n, err := m.lookup(name)
	switch {
	case err == syscall.ENOENT:
		err = nil
	case err != nil:
	case n == nil:
	case parent == nil:
		err = syscall.EBUSY
	default:
		delete(parent.children, base)
	}
	if err != nil {
		return &fs.PathError{Op: "RemoveAll", Path: name, Err: err}
	}
	return nil
}

// MkdirAll implements FS. perm is kept as given (no umask).
func (m *MemFS) MkdirAll(name string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir := m.root
	for _, p := range cleanPath(name) {
		next := dir.children[p]
		if next == nil {
			next = newDirNode(perm)
			dir.children[p] = next
		} else if !next.dir {
			return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.ENOTDIR}
		}
		dir = next
	}
	return nil
}

// ReadDir implements FS.
func (m *MemFS) ReadDir(name string) ([]os.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.lookup(name)
	switch {
	case err != nil:
	case n == nil:
		err = syscall.ENOENT
	case !n.dir:
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	entries := make([]os.DirEntry, 0, len(n.children))
	for _, childName := range slices.Sorted(maps.Keys(n.children)) {
		entries = append(entries, fs.FileInfoToDirEntry(n.children[childName].info(childName)))
	}
	return entries, nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, base, n, err := m.lookup(name)
	if err == nil && n == nil {
		err = syscall.ENOENT
	}
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if base == "" {
		base = "/"
	}
	return n.info(base), nil
}

func (n *memNode) info(name string) os.FileInfo {
	return &memFileInfo{name: name, size: int64(len(n.data)), mode: n.mode, modTime: n.modTime}
}

type memFileInfo struct {
	name    string
	size    int64
	mode    os.FileMode
	modTime time.Time
}

func (i *memFileInfo) Name() string       { return i.name }
func (i *memFileInfo) Size() int64        { return i.size }
func (i *memFileInfo) Mode() os.FileMode  { return i.mode }
func (i *memFileInfo) ModTime() time.Time { return i.modTime }
func (i *memFileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *memFileInfo) Sys() any           { return nil }

// memFile is an open file or directory of a MemFS. Its state is guarded by
// the MemFS's mutex.
type memFile struct {
	fs          *MemFS
	n           *memNode
	name        string
	pos         int64
	read, write bool
	closed      bool
}

func (f *memFile) check(op string, writing bool) error {
	var err error
	switch {
	case f.closed:
		err = os.ErrClosed
	case f.n.dir && !writing && op != "sync" && op != "stat":
		err = syscall.EISDIR
	case writing && !f.write:
		err = syscall.EBADF
	}
	if err != nil {
		return &fs.PathError{Op: op, Path: f.name, Err: err}
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if f.pos >= int64(len(f.n.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: syscall.EINVAL}
	}
	if off >= int64(len(f.n.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	end := f.pos + int64(len(p))
	if size := len(f.n.data); end > int64(size) {
		f.n.data = slices.Grow(f.n.data, int(end)-size)[:end]
		if f.pos > int64(size) {
			// Zero a hole left by a truncation through another handle.
			clear(f.n.data[size:f.pos])
		}
	}
	copy(f.n.data[f.pos:], p)
	f.pos = end
	f.n.modTime = time.Now()
	return len(p), nil
}

// Sync makes the file's contents durable, or, on a directory, its entries.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("sync", false); err != nil {
		return err
	}
	if f.n.dir {
		f.n.syncedChildren = maps.Clone(f.n.children)
	} else {
		f.n.synced = slices.Clone(f.n.data)
	}
	return nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: os.ErrClosed}
	}
	f.closed = true
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return nil, err
	}
	return f.n.info(path.Base(filepath.ToSlash(f.name))), nil
}

func (f *memFile) Name() string { return f.name }
