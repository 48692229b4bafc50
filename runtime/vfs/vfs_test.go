package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// class names an error by what callers test with errors.Is, so that MemFS
// and Default can be compared without their messages (which hold paths).
func class(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, io.EOF):
		return "eof"
	case errors.Is(err, fs.ErrNotExist):
		return "not-exist"
	case errors.Is(err, syscall.ENOTEMPTY): // before ErrExist, which matches it too
		return "not-empty"
	case errors.Is(err, fs.ErrExist):
		return "exist"
	case errors.Is(err, syscall.ENOTDIR):
		return "not-dir"
	case errors.Is(err, syscall.EISDIR):
		return "is-dir"
	case errors.Is(err, syscall.EINVAL):
		return "invalid"
	case errors.Is(err, syscall.EBADF):
		return "bad-fd"
	case errors.Is(err, fs.ErrClosed):
		return "closed"
	case errors.Is(err, ErrInjected):
		return "injected"
	}
	return "error: " + err.Error()
}

// dump lists the tree under root: "dir/" for a directory, "file: contents"
// for a file, depth first in name order.
func dump(t *testing.T, fsys FS, root string) string {
	t.Helper()
	var b strings.Builder
	var walk func(dir, rel string)
	walk = func(dir, rel string) {
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			t.Fatalf("dump: %v", err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			r := rel + e.Name()
			if e.IsDir() {
				fmt.Fprintf(&b, "%s/\n", r)
				walk(p, r+"/")
				continue
			}
			data, err := ReadFile(fsys, p)
			if err != nil {
				t.Fatalf("dump: %v", err)
			}
			fmt.Fprintf(&b, "%s: %q\n", r, data)
		}
	}
	walk(root, "")
	return b.String()
}

// run does one line of script on fsys, with paths relative to root, and
// returns what happened.
func run(fsys FS, root, line string) string {
	f := strings.Fields(line)
	p := func(i int) string { return filepath.Join(root, filepath.FromSlash(f[i])) }
	switch f[0] {
	case "mkdirall":
		return class(fsys.MkdirAll(p(1), 0o755))
	case "create":
		file, err := fsys.Create(p(1))
		if err != nil {
			return class(err)
		}
		return class(file.Close())
	case "writefile":
		return class(WriteFileSync(fsys, p(1), []byte(f[2])))
	case "atomic":
		return class(AtomicWriteFile(fsys, p(1), []byte(f[2])))
	case "cat":
		data, err := ReadFile(fsys, p(1))
		if err != nil {
			return class(err)
		}
		return fmt.Sprintf("ok %q", data)
	case "ls":
		entries, err := fsys.ReadDir(p(1))
		if err != nil {
			return class(err)
		}
		var names []string
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
		return "ok " + strings.Join(names, " ")
	case "stat":
		info, err := fsys.Stat(p(1))
		if err != nil {
			return class(err)
		}
		if info.IsDir() {
			return "ok dir " + info.Name()
		}
		return fmt.Sprintf("ok file %s %d", info.Name(), info.Size())
	case "open":
		file, err := fsys.Open(p(1))
		if err != nil {
			return class(err)
		}
		return class(file.Close())
	case "opendir":
		return class(SyncDir(fsys, p(1)))
	case "rename":
		return class(fsys.Rename(p(1), p(2)))
	case "rm":
		return class(fsys.Remove(p(1)))
	case "rmall":
		return class(fsys.RemoveAll(p(1)))
	}
	panic("unknown command " + line)
}

// The same script on the OS and on a MemFS gives the same results and the
// same tree.
func TestMemMatchesOS(t *testing.T) {
	script := `
		mkdirall a/b/c
		mkdirall a/b
		writefile a/f hello
		cat a/f
		stat a
		stat a/f
		stat a/f/x
		stat missing
		writefile missing/f x
		writefile a/f/g x
		create a/b
		cat a/b
		cat missing
		cat a/f/x
		ls a
		ls a/f
		ls missing
		ls a/f/x
		writefile a/f hi
		cat a/f
		create a/empty
		cat a/empty
		opendir a
		opendir .
		opendir a/f
		opendir missing
		open a
		open a/f
		open missing
		rename a/f a/g
		rename a/f a/g
		writefile a/h x
		rename a/g a/h
		cat a/h
		ls a
		rename a/h a/b
		rename a/b a/h
		rename a/b a/b/c/d
		rename a/b/c a/x
		mkdirall a/y
		rename a/x a/y
		rename a/h missing/h
		rename a/h a/h/x
		rename a/h a/h
		rename missing a/q
		rename a/h a/x/h
		ls a/x
		rm a/b
		rm a
		rm missing
		rm a/h/x
		rm a/x/h
		mkdirall a/h
		mkdirall a/h/z
		mkdirall a/y
		rmall missing
		rmall missing/x
		rmall a/h/x
		rmall a/y
		atomic a/m data
		atomic a/m data2
		cat a/m
		atomic missing/m data
		atomic a/x data
		ls a
		writefile a/x/deep/f x
		mkdirall a/x/deep/er
		writefile a/x/deep/er/f x
		rm a/x/deep
		ls .
	`
	osRoot := t.TempDir()
	mem := NewMem()
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		line = strings.TrimSpace(line)
		want := run(Default, osRoot, line)
		got := run(mem, "/", line)
		if got != want {
			t.Errorf("%s: MemFS %s, OS %s", line, got, want)
		}
	}
	if want, got := dump(t, Default, osRoot), dump(t, mem, "/"); got != want {
		t.Errorf("trees differ:\nOS:\n%sMemFS:\n%s", want, got)
	}
	// The last step of the script removes a/x/deep's contents, so a
	// non-empty RemoveAll is still to be checked.
	for _, line := range []string{"rmall a", "ls ."} {
		if want, got := run(Default, osRoot, line), run(mem, "/", line); got != want {
			t.Errorf("%s: MemFS %s, OS %s", line, got, want)
		}
	}
}

// fileTranscript exercises the methods of File and reports each result.
func fileTranscript(t *testing.T, fsys FS, root string) []string {
	var out []string
	note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	name := filepath.Join(root, "f")

	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.Write([]byte("hello"))
	note("write %d %s", n, class(err))
	n, err = f.Write([]byte(" world"))
	note("write %d %s", n, class(err))
	buf := make([]byte, 5)
	n, err = f.ReadAt(buf, 6)
	note("readat %d %q %s", n, buf[:n], class(err))
	n, err = f.ReadAt(buf, 8)
	note("readat short %d %q %s", n, buf[:n], class(err))
	n, err = f.ReadAt(buf, 11)
	note("readat end %d %s", n, class(err))
	n, err = f.Read(buf)
	note("read at end %d %s", n, class(err))
	info, err := f.Stat()
	note("stat %s %d %v %s", info.Name(), info.Size(), info.IsDir(), class(err))
	note("name ok %v", f.Name() == name)
	note("sync %s", class(f.Sync()))
	note("close %s", class(f.Close()))
	n, err = f.Read(buf)
	note("read closed %d %s", n, class(err))
	n, err = f.Write(buf)
	note("write closed %d %s", n, class(err))
	note("sync closed %s", class(f.Sync()))
	note("close closed %s", class(f.Close()))

	f, err = fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		n, err = f.Read(buf[:3])
		note("read %d %q %s", n, buf[:n], class(err))
	}
	n, err = f.Read(make([]byte, 10))
	note("read rest %d %q %s", n, buf[:0], class(err))
	n, err = f.Read(buf)
	note("read eof %d %s", n, class(err))
	n, err = f.Write([]byte("x"))
	note("write read-only %d %s", n, class(err))
	note("close %s", class(f.Close()))

	d, err := fsys.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	n, err = d.Read(buf)
	note("read dir %d %s", n, class(err))
	n, err = d.ReadAt(buf, 0)
	note("readat dir %d %s", n, class(err))
	n, err = d.Write(buf)
	note("write dir %d %s", n, class(err))
	info, err = d.Stat()
	note("stat dir %v %s", info.IsDir(), class(err))
	note("sync dir %s", class(d.Sync()))
	note("close dir %s", class(d.Close()))
	return out
}

func TestMemFileMatchesOS(t *testing.T) {
	want := fileTranscript(t, Default, t.TempDir())
	mem := NewMem()
	if err := mem.MkdirAll("/root", 0o755); err != nil {
		t.Fatal(err)
	}
	got := fileTranscript(t, mem, "/root")
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("File methods differ (-OS +MemFS):\n%s", diffLines(w, g))
	}
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "-%s\n+%s\n", wl, gl)
		}
	}
	return b.String()
}

func TestDefaultNotExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := ReadFile(Default, missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile: %v, want fs.ErrNotExist", err)
	}
	if _, err := Default.OpenDir(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenDir: %v, want fs.ErrNotExist", err)
	}
	if err := Default.Rename(missing, missing+"2"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Rename: %v, want fs.ErrNotExist", err)
	}
}

func TestReadFileLarge(t *testing.T) {
	for _, fsys := range []FS{Default, NewMem()} {
		name := filepath.Join(t.TempDir(), "big")
		if _, ok := fsys.(*MemFS); ok {
			name = "big"
		}
		data := []byte(strings.Repeat("0123456789", 10_000))
		if err := WriteFileSync(fsys, name, data); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(fsys, name)
		if err != nil || string(got) != string(data) {
			t.Errorf("%T: ReadFile: %d bytes, %v", fsys, len(got), err)
		}
	}
}

// Two handles of one file: writes overlap, and a truncation through one
// leaves a hole of zeros before the other's next write.
func TestTwoHandlesMatchOS(t *testing.T) {
	transcript := func(fsys FS, root string) string {
		name := filepath.Join(root, "f")
		a, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		a.Write([]byte("abc"))
		b.Write([]byte("0123456"))
		a.Write([]byte("XYZWV")) // from 3, past b's end
		c, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("q"))
		b.Write([]byte("!"))
		for _, f := range []File{a, b, c} {
			f.Close()
		}
		data, err := ReadFile(fsys, name)
		return fmt.Sprintf("%q %s", data, class(err))
	}
	want := transcript(Default, t.TempDir())
	if got := transcript(NewMem(), "/"); got != want {
		t.Errorf("MemFS %s, OS %s", got, want)
	}
}

// TestMkdirAllDurableRetry: a call of MkdirAllDurable that fails after
// creating directories leaves them unsynced, and a later call finds them
// existing: it must still sync their parents, so that after it returns the
// directories survive a crash. Every operation of the syncs fails in turn.
func TestMkdirAllDurableRetry(t *testing.T) {
	const dir = "/a/b/c"
	for fail := 0; ; fail++ {
		mem := NewMem()
		n := 0
		fsys := NewErrorFS(mem, InjectorFunc(func(op Op) error {
			if op.Kind == OpOpenDir || op.Kind == OpSync || op.Kind == OpClose {
				if n++; n == fail+1 {
					return ErrInjected
				}
			}
			return nil
		}))
		if err := MkdirAllDurable(fsys, dir); err == nil {
			if fail < 9 { // OpenDir, Sync and Close of "/", "/a" and "/a/b"
				t.Fatalf("the failure of sync operation %d was not reported", fail)
			}
			break // every operation has failed once
		}
		if err := MkdirAllDurable(fsys, dir); err != nil {
			t.Fatalf("sync operation %d failed, then: %v", fail, err)
		}
		if info, err := mem.CrashClone().Stat(dir); err != nil || !info.IsDir() {
			t.Errorf("sync operation %d failed, the retry succeeded, then a crash: %v", fail, err)
		}
	}
}

// TestMkdirAllDurablePartial: a MkdirAll that fails midway has created
// some directories; a later call for a longer path syncs their parents.
func TestMkdirAllDurablePartial(t *testing.T) {
	mem := NewMem()
	fsys := &halfMkdirFS{FS: mem}
	if err := MkdirAllDurable(fsys, "/a/b/c"); err == nil {
		t.Fatal("the failed MkdirAll was not reported")
	}
	if err := MkdirAllDurable(fsys, "/a/b/c/d"); err != nil {
		t.Fatal(err)
	}
	if info, err := mem.CrashClone().Stat("/a/b/c/d"); err != nil || !info.IsDir() {
		t.Errorf("after a crash: %v", err)
	}
}

// halfMkdirFS fails its first MkdirAll after creating the parent of the
// directory asked for.
type halfMkdirFS struct {
	FS
	failed bool
}

func (h *halfMkdirFS) MkdirAll(name string, perm os.FileMode) error {
	if h.failed {
		return h.FS.MkdirAll(name, perm)
	}
	h.failed = true
	if err := h.FS.MkdirAll(filepath.Dir(name), perm); err != nil {
		return err
	}
	return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.ENOSPC}
}
