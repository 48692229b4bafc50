package storage

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// savepointSource writes checkpoint 7 with a state file of its own and a
// shared one, a sink with a pending file, and returns its manifest.
func savepointSource(t *testing.T, fsys vfs.FS) (*Storage, *Manifest) {
	t.Helper()
	st := &Storage{FS: fsys, Dir: "/ckpt"}
	if err := st.Prepare(7); err != nil {
		t.Fatal(err)
	}
	m := testManifest(7)
	for sub, shared := range []bool{false, true} {
		name := []string{"sum-0.state", "sum-1-000007.state"}[sub]
		var w *StateWriter
		var err error
		if shared {
			w, err = st.CreateShared(name, 64, 64)
		} else {
			w, err = st.CreateState(7, name, 0, 64)
		}
		if err != nil {
			t.Fatal(err)
		}
		for kg := range 64 {
			w.Section([]byte(strings.Repeat("x", kg%5)))
		}
		size, crc, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		m.Nodes[1].Files = append(m.Nodes[1].Files, StateFile{Subtask: sub, Name: name, Shared: shared, KeyGroups: [2]int{sub * 64, sub*64 + 64}, Size: size, CRC: crc})
	}
	m.Nodes = append(m.Nodes, NodeState{UID: "out", Name: "out", Kind: "sink", Sinks: []SinkState{{Subtask: 0, NextSeq: 3,
		Pending: []PendingFile{{Seq: 2, Pending: ".part-00000-0000000002.pending", Final: "part-00000-0000000002"}}}}})
	if err := st.Commit(m); err != nil {
		t.Fatal(err)
	}
	return st, m
}

// TestSavepointCrashAtEveryOp writes a savepoint and crashes before each
// of its file operations: what a crash leaves is never a listed savepoint
// that does not restore, and the folder being written is refused. Once
// WriteSavepoint returns, the savepoint survives a crash, holds its files
// itself (none shared, no pending sink files), and restores wherever it is
// moved.
func TestSavepointCrashAtEveryOp(t *testing.T) {
	var ops int
	{
		mem := vfs.NewMem()
		st, m := savepointSource(t, mem)
		counting := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(vfs.Op) error { ops++; return nil }))
		if _, err := WriteSavepoint(counting, m, st.Path(7), "/sp"); err != nil {
			t.Fatal(err)
		}
	}
	if ops < 10 {
		t.Fatalf("%d file operations, want more", ops)
	}
	errCrash := errors.New("crash")
	for k := 0; k <= ops; k++ {
		mem := vfs.NewMem()
		st, m := savepointSource(t, mem)
		var crashed *vfs.MemFS
		n := 0
		fsys := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(vfs.Op) error {
			// The process dies before operation k: nothing after it
			// happens.
			if n++; n-1 == k {
				crashed = mem.CrashClone()
			}
			if crashed != nil {
				return errCrash
			}
			return nil
		}))
		path, err := WriteSavepoint(fsys, m, st.Path(7), "/sp")
		if crashed == nil {
			if err != nil {
				t.Fatalf("no crash: %v", err)
			}
			crashed = mem.CrashClone()
		} else if err == nil {
			t.Fatalf("crash before operation %d: WriteSavepoint returned %s", k, path)
		}
		list, err := ListSavepoints(crashed, "/sp")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			if _, err := LoadSavepoint(crashed, e.Path); err != nil {
				t.Errorf("crash before operation %d: savepoint %s is listed but does not restore: %v", k, e.Path, err)
			}
		}
		entries, _ := crashed.ReadDir("/sp")
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				if _, err := LoadSavepoint(crashed, filepath.Join("/sp", e.Name())); err == nil {
					t.Errorf("crash before operation %d: the half savepoint %s restores", k, e.Name())
				}
			}
		}
		if k < ops {
			continue
		}
		if len(list) != 1 || list[0].Path != path {
			t.Fatalf("after WriteSavepoint: savepoints %+v, want %s", list, path)
		}
		if err := crashed.Rename(path, "/elsewhere"); err != nil {
			t.Fatal(err)
		}
		l, err := LoadSavepoint(crashed, "/elsewhere")
		if err != nil {
			t.Fatal(err)
		}
		if !l.Manifest.Savepoint || l.Manifest.SavepointID == "" {
			t.Errorf("manifest %+v: want a savepoint with an id", l.Manifest)
		}
		for _, n := range l.Manifest.Nodes {
			for _, f := range n.Files {
				if f.Shared {
					t.Errorf("file %s is shared", f.Name)
				}
				r, err := l.Open(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, _, ok := r.Next(); ok; _, _, ok = r.Next() {
				}
				if err := r.Close(); err != nil {
					t.Errorf("%s: %v", f.Name, err)
				}
			}
			for _, s := range n.Sinks {
				if len(s.Pending) > 0 || s.NextSeq != 3 {
					t.Errorf("sink state %+v: want no pending files and the next number 3", s)
				}
			}
		}
	}
}
