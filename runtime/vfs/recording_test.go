package vfs

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestRecordingAtomicWriteFile(t *testing.T) {
	const want = `create chk-000001/MANIFEST.tmp
write chk-000001/MANIFEST.tmp 8
sync chk-000001/MANIFEST.tmp
close chk-000001/MANIFEST.tmp
rename chk-000001/MANIFEST.tmp chk-000001/MANIFEST
sync-dir chk-000001
`
	osRoot := t.TempDir()
	for _, c := range []struct {
		name  string
		inner FS
		root  string
	}{
		{"os", Default, osRoot},
		{"mem", NewMem(), "/ckpt"},
		{"mem relative", NewMem(), "ckpt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(c.root, "chk-000001")
			if err := c.inner.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			rfs := NewRecordingFS(c.inner, &log, c.root)
			if err := AtomicWriteFile(rfs, filepath.Join(dir, "MANIFEST"), []byte("manifest")); err != nil {
				t.Fatal(err)
			}
			data, err := ReadFile(rfs, filepath.Join(dir, "MANIFEST"))
			if err != nil || string(data) != "manifest" {
				t.Fatalf("ReadFile: %q, %v", data, err)
			}
			if got := log.String(); got != want {
				t.Errorf("log (-want +got):\n%s", diffLines(want, got))
			}
		})
	}
}

func TestRecordingOps(t *testing.T) {
	const want = `mkdirall a/b
create a/f
write a/f 3
write a/f 0
write a/f 2
close a/f
rename a/f a/b/g
sync-dir .
sync a/b/g
remove a/b/g
remove a/missing (failed)
removeall a
create missing/f (failed)
`
	var log strings.Builder
	rfs := NewRecordingFS(NewMem(), &log, "")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rfs.MkdirAll("a/b", 0o755))
	f, err := rfs.Create("a/f")
	must(err)
	for _, s := range []string{"abc", "", "de"} {
		_, err := f.Write([]byte(s))
		must(err)
	}
	must(f.Close())
	must(rfs.Rename("a/f", "a/b/g"))
	must(SyncDir(rfs, "."))
	// Reads are not logged; a Sync through a read handle is.
	if _, err := rfs.Stat("a/b/g"); err != nil {
		t.Fatal(err)
	}
	if _, err := rfs.ReadDir("a"); err != nil {
		t.Fatal(err)
	}
	r, err := rfs.Open("a/b/g")
	must(err)
	if _, err := r.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	must(r.Sync())
	must(r.Close())
	must(rfs.Remove("a/b/g"))
	if err := rfs.Remove("a/missing"); err == nil {
		t.Fatal("Remove of a missing file succeeded")
	}
	must(rfs.RemoveAll("a"))
	if _, err := rfs.Create("missing/f"); err == nil {
		t.Fatal("Create in a missing directory succeeded")
	}
	if got := log.String(); got != want {
		t.Errorf("log (-want +got):\n%s", diffLines(want, got))
	}
}

// A RecordingFS over an ErrorFS logs the injected failures and what the
// caller did about them.
func TestRecordingInjectedFailure(t *testing.T) {
	const want = `create MANIFEST.tmp
write MANIFEST.tmp 1
sync MANIFEST.tmp (failed)
close MANIFEST.tmp
remove MANIFEST.tmp
`
	var log strings.Builder
	m := NewMem()
	rfs := NewRecordingFS(NewErrorFS(m, OnceAt(OpSync, "", nil)), &log, "/")
	if err := AtomicWriteFile(rfs, "/MANIFEST", []byte("m")); !errors.Is(err, ErrInjected) {
		t.Fatalf("AtomicWriteFile: %v", err)
	}
	if got := log.String(); got != want {
		t.Errorf("log (-want +got):\n%s", diffLines(want, got))
	}
}
