package vfs

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func mustDo(t *testing.T, fsys FS, lines string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(lines), "\n") {
		line = strings.TrimSpace(line)
		if got := run(fsys, "/", line); !strings.HasPrefix(got, "ok") {
			t.Fatalf("%s: %s", line, got)
		}
	}
}

func TestCrashClone(t *testing.T) {
	tests := []struct {
		name   string
		script string // run on a fresh MemFS, then crash
		want   string // dump of the crash clone
	}{{
		name:   "nothing synced",
		script: "mkdirall a\nwritefile a/f x",
		want:   "",
	}, {
		name:   "file synced, its directory entry not",
		script: "mkdirall a\nopendir .\nwritefile a/f x",
		want:   "a/\n",
	}, {
		name:   "file and entry synced",
		script: "mkdirall a\nopendir .\nwritefile a/f x\nopendir a",
		want:   "a/\na/f: \"x\"\n",
	}, {
		name:   "entry synced before the data",
		script: "mkdirall a\nopendir .\ncreate a/f\nopendir a",
		want:   "a/\na/f: \"\"\n",
	}, {
		name:   "new directory's own entries need the parent's sync too",
		script: "mkdirall a/b\nwritefile a/b/f x\nopendir a/b\nopendir a",
		want:   "",
	}, {
		name:   "rename not synced: old name",
		script: "writefile f old\nopendir .\nrename f g",
		want:   "f: \"old\"\n",
	}, {
		name:   "rename synced: new name, replacing",
		script: "writefile f new\nwritefile g old\nopendir .\nrename f g\nopendir .",
		want:   "g: \"new\"\n",
	}, {
		name:   "remove not synced: still there",
		script: "writefile f x\nopendir .\nrm f",
		want:   "f: \"x\"\n",
	}, {
		name:   "remove synced",
		script: "writefile f x\nopendir .\nrm f\nopendir .",
		want:   "",
	}, {
		name:   "removeall not synced: the subtree as last synced",
		script: "mkdirall a/b\nwritefile a/b/f x\nopendir a/b\nopendir a\nopendir .\nwritefile a/g y\nrmall a",
		want:   "a/\na/b/\na/b/f: \"x\"\n",
	}, {
		name:   "truncation not synced: old contents",
		script: "writefile f old\nopendir .\ncreate f",
		want:   "f: \"old\"\n",
	}, {
		name:   "atomic write: durable",
		script: "writefile m old\nopendir .\natomic m new",
		want:   "m: \"new\"\n",
	}, {
		name:   "move between directories, only the new one synced: in both",
		script: "mkdirall a\nmkdirall b\nwritefile a/f x\nopendir a\nopendir .\nrename a/f b/f\nopendir b",
		want:   "a/\na/f: \"x\"\nb/\nb/f: \"x\"\n",
	}, {
		name:   "move between directories, only the old one synced: in neither",
		script: "mkdirall a\nmkdirall b\nwritefile a/f x\nopendir a\nopendir b\nopendir .\nrename a/f b/f\nopendir a",
		want:   "a/\nb/\n",
	}, {
		// Durable entries: / -> a, a -> b, b -> a (a was moved into b,
		// and only b was synced since). The entry that closes the cycle
		// is dropped.
		name:   "cycle of durable entries",
		script: "mkdirall a/b\nopendir .\nopendir a\nrename a/b c\nrename a c/a\nopendir c",
		want:   "a/\na/b/\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMem()
			mustDo(t, m, tt.script)
			before := dump(t, m, "/")
			c := m.CrashClone()
			if got := dump(t, c, "/"); got != tt.want {
				t.Errorf("after crash:\n%s\nwant:\n%s", got, tt.want)
			}
			if after := dump(t, m, "/"); after != before {
				t.Errorf("CrashClone changed the original:\n%s\nwas:\n%s", after, before)
			}
			// Everything in the clone is durable.
			if again := dump(t, c.CrashClone(), "/"); again != tt.want {
				t.Errorf("crash of the clone:\n%s\nwant:\n%s", again, tt.want)
			}
		})
	}
}

func TestCrashCloneDataAfterSync(t *testing.T) {
	m := NewMem()
	f, err := m.Create("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(m, "/"); err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("durable"))
	f.Sync()
	f.Write([]byte(" volatile"))
	if got := dump(t, m.CrashClone(), "/"); got != "f: \"durable\"\n" {
		t.Errorf("after crash: %s", got)
	}
	// A file removed while open keeps its node: syncing it changes nothing
	// visible once the removal is durable.
	m.Remove("f")
	f.Sync()
	f.Close()
	if got := dump(t, m.CrashClone(), "/"); got != "f: \"durable volatile\"\n" {
		t.Errorf("after crash, removal not synced: %s", got)
	}
	SyncDir(m, "/")
	if got := dump(t, m.CrashClone(), "/"); got != "" {
		t.Errorf("after crash, removal synced: %s", got)
	}
}

// A crash at any point of AtomicWriteFile leaves the old contents or the
// new ones; after it returns, the new ones.
func TestAtomicWriteFileCrashAtEveryStep(t *testing.T) {
	m := NewMem()
	mustDo(t, m, "mkdirall d\nopendir .\nwritefile d/m old\nopendir d")
	var seen []string
	var steps []string
	crashing := NewErrorFS(m, InjectorFunc(func(op Op) error {
		got := dump(t, m.CrashClone(), "/")
		steps = append(steps, op.Kind.String()+" "+op.Path)
		seen = append(seen, got)
		return nil
	}))
	if err := AtomicWriteFile(crashing, "d/m", []byte("new")); err != nil {
		t.Fatal(err)
	}
	seen = append(seen, dump(t, m.CrashClone(), "/"))
	steps = append(steps, "returned")
	const oldState, newState = "d/\nd/m: \"old\"\n", "d/\nd/m: \"new\"\n"
	for i, s := range seen {
		// The temporary file may survive, but m is whole.
		m := strings.Join(strings.SplitAfter(s, "\n")[:2], "")
		if m != oldState && m != newState {
			t.Errorf("crash before step %d (%s): %q", i, steps[i], s)
		}
	}
	if last := seen[len(seen)-1]; last != newState {
		t.Errorf("crash after AtomicWriteFile: %q, want %q", last, newState)
	}
	// Before the directory's sync, the rename is not durable: that sync is
	// what makes the write committed.
	wantSteps := "create d/m.tmp, write d/m.tmp, sync d/m.tmp, close d/m.tmp, rename d/m.tmp, open-dir d, sync d, close d, returned"
	if got := strings.Join(steps, ", "); got != wantSteps {
		t.Fatalf("steps: %s\nwant: %s", got, wantSteps)
	}
	if beforeSyncDir := seen[6]; !strings.HasPrefix(beforeSyncDir, oldState) {
		t.Errorf("crash before the directory sync: %q, want the old contents", beforeSyncDir)
	}
}

func TestMemConcurrent(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("d", 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				name := fmt.Sprintf("d/%d-%d", i, j)
				if err := AtomicWriteFile(m, name, []byte(name)); err != nil {
					t.Error(err)
				}
				if _, err := m.ReadDir("d"); err != nil {
					t.Error(err)
				}
				_ = m.CrashClone()
			}
		})
	}
	wg.Wait()
	entries, err := m.ReadDir("d")
	if err != nil || len(entries) != 160 {
		t.Fatalf("ReadDir: %d entries, %v", len(entries), err)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name() >= entries[i].Name() {
			t.Fatalf("ReadDir not sorted: %s before %s", entries[i-1].Name(), entries[i].Name())
		}
	}
}

func TestMemPaths(t *testing.T) {
	m := NewMem()
	mustDo(t, m, "mkdirall a/b")
	for _, name := range []string{"a/b/f", "/a/b/f", "./a//b/f", "a/../a/b/f", "a/b/./f"} {
		if err := WriteFileSync(m, name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := dump(t, m, "/"); got != "a/\na/b/\na/b/f: \"a/b/./f\"\n" {
		t.Errorf("tree:\n%s", got)
	}
	info, err := m.Stat("/")
	if err != nil || !info.IsDir() {
		t.Errorf("Stat(/): %v, %v", info, err)
	}
}
