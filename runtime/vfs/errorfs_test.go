package vfs

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestOnceAtFailsFirstMatchOnly(t *testing.T) {
	m := NewMem()
	efs := NewErrorFS(m, OnceAt(OpSync, "MANIFEST", nil))
	mustDo(t, efs, "mkdirall chk-1\nwritefile chk-1/state x")
	// The first sync of a path with MANIFEST fails; the write is not
	// committed and the temporary file is removed.
	err := AtomicWriteFile(efs, "chk-1/MANIFEST", []byte("m"))
	if !errors.Is(err, ErrInjected) {
		t.Fatalf("AtomicWriteFile: %v, want ErrInjected", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "sync" || pe.Path != "chk-1/MANIFEST.tmp" {
		t.Errorf("error %#v, want a *fs.PathError of sync chk-1/MANIFEST.tmp", err)
	}
	if got := dump(t, m, "/"); got != "chk-1/\nchk-1/state: \"x\"\n" {
		t.Errorf("after the failure:\n%s", got)
	}
	// Then everything passes.
	if err := AtomicWriteFile(efs, "chk-1/MANIFEST", []byte("m")); err != nil {
		t.Fatalf("second AtomicWriteFile: %v", err)
	}
	if got := dump(t, m, "/"); got != "chk-1/\nchk-1/MANIFEST: \"m\"\nchk-1/state: \"x\"\n" {
		t.Errorf("after the retry:\n%s", got)
	}
}

func TestAlwaysFails(t *testing.T) {
	boom := errors.New("boom")
	m := NewMem()
	efs := NewErrorFS(m, Always(OpRename, "MANIFEST", boom))
	mustDo(t, efs, "writefile a x\nwritefile b y")
	for range 3 {
		err := AtomicWriteFile(efs, "MANIFEST", []byte("m"))
		if !errors.Is(err, boom) {
			t.Fatalf("AtomicWriteFile: %v, want boom", err)
		}
		var le *os.LinkError
		if !errors.As(err, &le) || le.Op != "rename" {
			t.Fatalf("%#v is not an *os.LinkError of rename", err)
		}
	}
	// Rename matches the new name too.
	if err := efs.Rename("a", "MANIFEST"); !errors.Is(err, boom) {
		t.Errorf("rename to MANIFEST: %v", err)
	}
	if err := efs.Rename("a", "b"); err != nil {
		t.Errorf("rename a b: %v", err)
	}
	if got := dump(t, m, "/"); got != "b: \"x\"\n" {
		t.Errorf("tree:\n%s", got)
	}
}

// Every kind reaches the injector, on the FS and on its files; a failed
// operation is not done.
func TestErrorFSEveryKind(t *testing.T) {
	ops := []struct {
		kind OpKind
		do   func(fsys FS) error
	}{
		{OpCreate, func(fsys FS) error { _, err := fsys.Create("d/f"); return err }},
		{OpOpen, func(fsys FS) error { _, err := fsys.Open("d/f"); return err }},
		{OpOpenDir, func(fsys FS) error { _, err := fsys.OpenDir("d"); return err }},
		{OpRename, func(fsys FS) error { return fsys.Rename("d/f", "d/g") }},
		{OpRemove, func(fsys FS) error { return fsys.Remove("d/f") }},
		{OpRemoveAll, func(fsys FS) error { return fsys.RemoveAll("d") }},
		{OpMkdirAll, func(fsys FS) error { return fsys.MkdirAll("d/e", 0o755) }},
		{OpReadDir, func(fsys FS) error { _, err := fsys.ReadDir("d"); return err }},
		{OpStat, func(fsys FS) error { _, err := fsys.Stat("d/f"); return err }},
		{OpWrite, func(fsys FS) error { return WriteFileSync(fsys, "d/f", []byte("new")) }},
		{OpSync, func(fsys FS) error { return WriteFileSync(fsys, "d/f", []byte("new")) }},
		{OpClose, func(fsys FS) error { return WriteFileSync(fsys, "d/f", []byte("new")) }},
		{OpSync, func(fsys FS) error { return SyncDir(fsys, "d") }},
		{OpRead, func(fsys FS) error { _, err := ReadFile(fsys, "d/f"); return err }},
		{OpStat, func(fsys FS) error {
			f, err := fsys.Open("d/f")
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Stat()
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.kind.String(), func(t *testing.T) {
			m := NewMem()
			mustDo(t, m, "mkdirall d\nwritefile d/f old")
			before := dump(t, m, "/")
			var calls []Op
			efs := NewErrorFS(m, InjectorFunc(func(o Op) error {
				calls = append(calls, o)
				if o.Kind == op.kind {
					return ErrInjected
				}
				return nil
			}))
			if err := op.do(efs); !errors.Is(err, ErrInjected) {
				t.Fatalf("%v, want ErrInjected; calls %v", err, calls)
			}
			after := dump(t, m, "/")
			switch op.kind {
			case OpWrite:
				// Create truncated d/f; the write did not happen.
				if want := "d/\nd/f: \"\"\n"; after != want {
					t.Errorf("the failed write was done:\n%s", after)
				}
			case OpSync, OpClose:
				// Done after the create and the write.
			default:
				if after != before {
					t.Errorf("the failed operation was done:\n%s\nwas:\n%s", after, before)
				}
			}
			// Without the injector's error, the same operation passes.
			if err := op.do(NewErrorFS(m, OnceAt(op.kind, "nomatch", nil))); err != nil {
				t.Errorf("pass-through: %v", err)
			}
		})
	}
}

func TestOpKindString(t *testing.T) {
	for k := OpCreate; k <= OpRead; k++ {
		if s := k.String(); s == "" || s[0] == 'o' && s[1] == 'p' && s[2] == '(' {
			t.Errorf("OpKind %d has no name", k)
		}
	}
	if s := OpKind(99).String(); s != "op(99)" {
		t.Errorf("OpKind(99) = %q", s)
	}
}
