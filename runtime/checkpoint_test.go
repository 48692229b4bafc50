package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// goldenOpsHeader heads testdata/checkpoint-ops.txt.
const goldenOpsHeader = `# The file operations of a run of the sum job (generator -> keyed sum ->
# file sink) with one subtask per node: checkpoint 1, taken after 11 records,
# then the final checkpoint 2. Paths are relative to the filesystem's root;
# the manifest's size varies and is shown as <size>, and writes that follow
# each other are shown as one.
# Regenerate with: go test ./runtime -run TestCheckpointFileOps -update
`

// TestCheckpointFileOps pins the order of the file operations of a
// checkpoint: state files and the sink's pending files are durable before
// the manifest is renamed into place (the commit point), and the sink's
// files are committed only after it.
func TestCheckpointFileOps(t *testing.T) {
	mem := vfs.NewMem()
	rec := new(syncBuffer)
	o := &sumJob{p: 1, n: 20, keys: 3, interval: time.Millisecond, retain: 3,
		fs: vfs.NewRecordingFS(mem, rec, "/"),
		// Checkpoint 1 is triggered at once (no checkpoint completed
		// yet), the next one never: the only other is the final one.
		minPause: time.Hour,
		// Records 0..10 come before barrier 1: the source waits for it at
		// record 10 and neither injects it nor hands records on before.
		// Record 11 waits until checkpoint 1 is committed, so that the
		// sink writes nothing while the checkpoint's files are written.
		pauses:    []uint64{10},
		holdPolls: 10,
		hook: func(c *sumSource, i uint64) {
			if i == 11 {
				c.awaitCommitted(1)
			}
		},
	}
	o.mustRun(t)
	o.checkOutput(t, mem)
	ms := checkpoints(t, mem)
	if len(ms) != 2 || ms[1] == nil || ms[1].Final || ms[2] == nil || !ms[2].Final {
		t.Fatalf("checkpoints %v, want 1 and the final 2", ms)
	}
	ops := strings.Split(strings.TrimSuffix(rec.String(), "\n"), "\n")
	checkCommitOrder(t, ops, ms)
	var b strings.Builder
	b.WriteString(goldenOpsHeader)
	for _, op := range mergeWrites(ops) {
		b.WriteString(manifestSize.ReplaceAllString(op, "$1 <size>"))
		b.WriteByte('\n')
	}
	goldenfile.Check(t, "testdata/checkpoint-ops.txt", []byte(b.String()))
}

var manifestSize = regexp.MustCompile(`^(write \S+/MANIFEST\.tmp) \d+$`)

// mergeWrites merges the writes to a file that follow each other into one:
// how a sink's buffered records reach its file (when it flushes, at a
// linger or when idle) depends on timing.
func mergeWrites(ops []string) []string {
	var out []string
	for _, op := range ops {
		f := strings.Fields(op)
		if len(out) > 0 && len(f) == 3 && f[0] == "write" {
			g := strings.Fields(out[len(out)-1])
			if len(g) == 3 && g[0] == "write" && g[1] == f[1] {
				a, _ := strconv.Atoi(g[2])
				b, _ := strconv.Atoi(f[2])
				out[len(out)-1] = fmt.Sprintf("write %s %d", f[1], a+b)
				continue
			}
		}
		out = append(out, op)
	}
	return out
}

// TestCheckpointFileOpsOrderParallel checks the order of file operations
// of every checkpoint of a run with several subtasks, whose operations
// interleave differently from run to run (in a final checkpoint, with
// those of a checkpoint it superseded).
func TestCheckpointFileOpsOrderParallel(t *testing.T) {
	for _, p := range []int{2, 3} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			mem := vfs.NewMem()
			rec := new(syncBuffer)
			o := defaultSumJob(p, newLockedFS(vfs.NewRecordingFS(mem, rec, "/")))
			o.mustRun(t)
			o.checkOutput(t, mem)
			ms := checkpoints(t, mem)
			if len(ms) < 2 {
				t.Fatalf("%d checkpoints, want at least 2", len(ms))
			}
			checkCommitOrder(t, strings.Split(strings.TrimSuffix(rec.String(), "\n"), "\n"), ms)
		})
	}
}

// checkCommitOrder checks, in a log of a RecordingFS rooted at "/", the
// order of the operations of every complete checkpoint of ms:
//
//   - the checkpoint's folder is created and its parent synced before any
//     state file is written into it;
//   - every state file is written, synced and closed, and the folder
//     synced, before the manifest is created;
//   - every pending sink file the manifest names was closed by the sink,
//     synced under its in-progress name, renamed to its pending name and
//     its directory synced, before the manifest's rename;
//   - the manifest is written, synced, closed and renamed, and the folder
//     synced after;
//   - a sink file is committed (renamed to its final name) only once a
//     manifest that names it is durable, and its directory is synced
//     after; every file a manifest names is committed;
//   - a directory made on the way is durable (its parent synced) before
//     the next manifest is renamed into place.
func checkCommitOrder(t *testing.T, ops []string, ms map[int64]*storage.Manifest) {
	t.Helper()
	rel := func(p string) string { return strings.TrimPrefix(filepath.ToSlash(p), "/") }
	// index returns the position of the first op equal to want at or
	// after from, -1 when there is none.
	index := func(want string, from int) int {
		for i := max(from, 0); i < len(ops); i++ {
			if ops[i] == want {
				return i
			}
		}
		return -1
	}
	lastBefore := func(want string, before int) int {
		for i := before - 1; i >= 0; i-- {
			if ops[i] == want {
				return i
			}
		}
		return -1
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format+"\nops:\n%s", append(args, strings.Join(ops, "\n"))...)
	}
	// A directory made on the way to a checkpoint or a sink file is
	// durable before any manifest is renamed into place after it.
	for i, op := range ops {
		d, ok := strings.CutPrefix(op, "mkdirall ")
		if !ok {
			continue
		}
		parent := filepath.ToSlash(filepath.Dir(d))
		for k := i + 1; k < len(ops); k++ {
			if ops[k] == "sync-dir "+parent {
				break
			}
			if strings.HasPrefix(ops[k], "rename ") && strings.HasSuffix(ops[k], "/MANIFEST") {
				fail("%s made at %d, but its parent is not synced before the manifest's rename at %d", d, i, k)
				break
			}
		}
	}
	// durable maps a sink file's final name to the positions where
	// manifests that commit it are durable.
	durable := map[string][]int{}
	for id, m := range ms {
		if m == nil {
			continue
		}
		dir := rel(filepath.Join(sumCkptDir, storage.FolderName(id)))
		mkdir := index("mkdirall "+dir, 0)
		prepared := index("sync-dir "+rel(sumCkptDir), mkdir)
		tmp := dir + "/MANIFEST.tmp"
		create := index("create "+tmp, 0)
		rename := index("rename "+tmp+" "+dir+"/MANIFEST", create)
		synced := index("sync-dir "+dir, rename)
		if mkdir < 0 || prepared < 0 || create < 0 || rename < 0 || synced < 0 {
			fail("checkpoint %d: no mkdirall %d / sync-dir of the parent %d / manifest create %d, rename %d / sync-dir after it %d", id, mkdir, prepared, create, rename, synced)
			continue
		}
		if i := lastBefore("sync-dir "+dir, create); i < 0 {
			fail("checkpoint %d: the folder is not synced before the manifest is written", id)
		}
		// The manifest: written, synced, closed, renamed.
		w := -1
		for i := create + 1; i < rename; i++ {
			if strings.HasPrefix(ops[i], "write "+tmp+" ") {
				w = i
				break
			}
		}
		s := index("sync "+tmp, w)
		c := index("close "+tmp, s)
		if w < 0 || s < 0 || c < 0 || c > rename {
			fail("checkpoint %d: manifest written at %d, synced at %d, closed at %d, renamed at %d", id, w, s, c, rename)
		}
		for _, n := range m.Nodes {
			for _, f := range n.Files {
				p := dir + "/" + f.Name
				if f.Shared {
					p = rel(filepath.Join(sumCkptDir, storage.SharedDir, f.Name))
				}
				fc := index("create "+p, 0)
				fs := index("sync "+p, fc)
				fcl := index("close "+p, fs)
				if fc < 0 || !f.Shared && fc < prepared || fs < 0 || fcl < 0 || fcl > create {
					fail("checkpoint %d: state file %s created at %d, synced at %d, closed at %d; the manifest is created at %d", id, p, fc, fs, fcl, create)
				}
				// A shared file's entry is durable before the manifest
				// that names it.
				if sd := index("sync-dir "+rel(filepath.Join(sumCkptDir, storage.SharedDir)), fcl); f.Shared && (sd < 0 || sd > rename) {
					fail("checkpoint %d: the folder of %s is not synced between its close at %d and the manifest's rename at %d", id, p, fcl, rename)
				}
			}
			for _, sk := range n.Sinks {
				for _, pf := range sk.Pending {
					pending, final := rel(filepath.Join(sumOutDir, pf.Pending)), rel(filepath.Join(sumOutDir, pf.Final))
					inprogress := strings.TrimSuffix(pending, ".pending") + ".inprogress"
					pr := lastBefore("rename "+inprogress+" "+pending, rename)
					ps := lastBefore("sync "+inprogress, pr)
					pc := lastBefore("close "+inprogress, ps)
					pd := index("sync-dir "+rel(sumOutDir), pr)
					if pr < 0 || ps < 0 || pc < 0 || pd < 0 || pd > rename {
						fail("checkpoint %d: %s closed at %d, synced at %d, renamed to pending at %d, directory synced at %d; the manifest is renamed at %d", id, inprogress, pc, ps, pr, pd, rename)
					}
					if index("rename "+pending+" "+final, 0) < 0 {
						fail("checkpoint %d: %s is never committed", id, final)
					}
					durable[final] = append(durable[final], synced)
				}
			}
		}
	}
	// A sink file is committed only after a manifest that names it is
	// durable, and the sink directory is synced after.
	for i, op := range ops {
		f := strings.Fields(op)
		if len(f) != 3 || f[0] != "rename" || !strings.HasSuffix(f[1], ".pending") {
			continue
		}
		if !slices.ContainsFunc(durable[f[2]], func(at int) bool { return at < i }) {
			fail("%s committed at %d before any manifest that names it is durable (at %v)", f[2], i, durable[f[2]])
		}
		if index("sync-dir "+filepath.ToSlash(filepath.Dir(f[2])), i) < 0 {
			fail("the sink directory is not synced after %s is committed at %d", f[2], i)
		}
	}
}

// TestCheckpointFaults fails one file operation of the first checkpoint:
// the checkpoint is given up (and logged), the job goes on, the next
// checkpoint completes, and the output is exactly once.
func TestCheckpointFaults(t *testing.T) {
	type fault struct {
		name string
		kind vfs.OpKind
		path string
		log  string
	}
	cases := []fault{
		{"prepare", vfs.OpMkdirAll, "chk-000001", "checkpoint 1 not started: "},
		{"state file create", vfs.OpCreate, ".state", "checkpoint 1 failed and is given up, processing goes on: "},
		{"state file write", vfs.OpWrite, ".state", "checkpoint 1 failed and is given up, processing goes on: "},
		{"state file sync", vfs.OpSync, ".state", "checkpoint 1 failed and is given up, processing goes on: "},
		{"state file close", vfs.OpClose, ".state", "checkpoint 1 failed and is given up, processing goes on: "},
		{"sink pre-commit open", vfs.OpOpen, ".inprogress", "checkpoint 1 failed and is given up, processing goes on: pre-commit "},
		{"sink pre-commit sync", vfs.OpSync, ".inprogress", "checkpoint 1 failed and is given up, processing goes on: pre-commit "},
		{"sink pre-commit rename", vfs.OpRename, ".inprogress", "checkpoint 1 failed and is given up, processing goes on: pre-commit "},
		{"sink pre-commit sync-dir", vfs.OpOpenDir, sumOutDir, "checkpoint 1 failed and is given up, processing goes on: "},
		{"folder sync", vfs.OpOpenDir, "chk-000001", "checkpoint 1 failed and is given up, processing goes on: write manifest: "},
		{"manifest write", vfs.OpWrite, "MANIFEST.tmp", "checkpoint 1 failed and is given up, processing goes on: write manifest: "},
		{"manifest sync", vfs.OpSync, "MANIFEST.tmp", "checkpoint 1 failed and is given up, processing goes on: write manifest: "},
		{"manifest rename", vfs.OpRename, "/MANIFEST", "checkpoint 1 failed and is given up, processing goes on: write manifest: "},
	}
	// On pebble, the state is the stores' files: sstables in the shared
	// folder, the stores' MANIFESTs in the checkpoint's.
	pebbleCases := []fault{
		{"sstable create", vfs.OpCreate, ".sst", "checkpoint 1 failed and is given up, processing goes on: "},
		{"sstable write", vfs.OpWrite, ".sst", "checkpoint 1 failed and is given up, processing goes on: "},
		{"sstable sync", vfs.OpSync, ".sst", "checkpoint 1 failed and is given up, processing goes on: "},
		{"store manifest write", vfs.OpWrite, "sum-1-MANIFEST", "checkpoint 1 failed and is given up, processing goes on: "},
		{"shared folder sync", vfs.OpOpenDir, "/shared", "checkpoint 1 failed and is given up, processing goes on: "},
	}
	for i, c := range append(cases, pebbleCases...) {
		backend := "memory"
		if i >= len(cases) {
			backend = "pebble"
		}
		t.Run(backend+"/"+c.name, func(t *testing.T) {
			mem := vfs.NewMem()
			o := defaultSumJob(2, vfs.NewErrorFS(mem, vfs.OnceAt(c.kind, c.path, nil)))
			o.backend = backend
			r := o.mustRun(t)
			log := r.log.String()
			if !strings.Contains(log, c.log) || !strings.Contains(log, vfs.ErrInjected.Error()) {
				t.Errorf("the log does not tell that checkpoint 1 failed with %q:\n%s", c.log, log)
			}
			o.checkOutput(t, mem)
			if h := hiddenFiles(mem); len(h) > 0 {
				t.Errorf("hidden files left: %v", h)
			}
			ms := checkpoints(t, mem)
			if m, ok := ms[1]; ok && m != nil {
				t.Errorf("the failed checkpoint 1 has a manifest")
			}
			if m := ms[2]; m == nil || m.Final {
				t.Errorf("checkpoint 2 is not complete: %v\nlog:\n%s", ms, log)
			}
			checkNoStrayFiles(t, mem, sumCkptDir)
		})
	}
}

// checkNoStrayFiles fails the test unless every checkpoint folder of the
// checkpoint directory dir has an intact manifest and the shared folder
// holds exactly the files that those manifests refer to: nothing of a
// failed, given-up or pruned checkpoint is left behind.
func checkNoStrayFiles(t testing.TB, fsys vfs.FS, dir string) {
	t.Helper()
	st := &storage.Storage{FS: fsys, Dir: dir}
	entries, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]bool{}
	for _, e := range entries {
		m, err := st.ReadManifest(e.ID)
		if err != nil {
			t.Errorf("checkpoint folder %s is left without an intact manifest: %v", storage.FolderName(e.ID), err)
			continue
		}
		for _, name := range m.SharedFiles() {
			refs[name] = true
			if _, err := fsys.Stat(st.SharedPath(name)); err != nil {
				t.Errorf("checkpoint %d refers to %s, which is missing: %v", e.ID, name, err)
			}
		}
	}
	files, _ := fsys.ReadDir(filepath.Join(dir, storage.SharedDir))
	for _, f := range files {
		if !refs[f.Name()] {
			t.Errorf("%s/%s is left over: no checkpoint refers to it", storage.SharedDir, f.Name())
		}
	}
}

// failCommit is an injector that fails the commit (the rename to the
// final name) of the first sink file committed, every time when always,
// and remembers its name. onFail, if set, runs before the first failure.
type failCommit struct {
	always bool
	onFail func()
	mu     sync.Mutex
	final  string
	count  int
}

func (f *failCommit) MaybeError(op vfs.Op) error {
	if op.Kind != vfs.OpRename || !strings.HasPrefix(op.NewPath, sumOutDir+"/part-") {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.final == "" {
		f.final = op.NewPath
	}
	if op.NewPath == f.final && (f.always || f.count == 0) {
		if f.count == 0 && f.onFail != nil {
			f.onFail()
		}
		f.count++
		return vfs.ErrInjected
	}
	return nil
}

// TestCheckpointCommitFails fails the commit of a sink file after the
// checkpoint's manifest is written: the checkpoint is complete, the job
// goes on, and the file is committed by the next checkpoint.
func TestCheckpointCommitFails(t *testing.T) {
	mem := vfs.NewMem()
	inj := &failCommit{}
	o := defaultSumJob(2, vfs.NewErrorFS(mem, inj))
	r := o.mustRun(t)
	if !strings.Contains(r.log.String(), "checkpoint 1 is complete, but committing its output failed (the next checkpoint or a restart commits it): commit "+inj.final) {
		t.Errorf("the log does not tell that %s was not committed:\n%s", inj.final, r.log)
	}
	o.checkOutput(t, mem)
	if h := hiddenFiles(mem); len(h) > 0 {
		t.Errorf("hidden files left: %v", h)
	}
	ms := checkpoints(t, mem)
	if ms[1] == nil {
		t.Fatal("checkpoint 1 has no manifest")
	}
	if ms[2] == nil || ms[2].Final {
		t.Fatalf("checkpoint 2 is not complete: %v", ms)
	}
	if !slices.Contains(sinkFinals(ms[2]), inj.final) {
		t.Errorf("checkpoint 2 does not commit %s again: it commits %v", inj.final, sinkFinals(ms[2]))
	}
}

// TestFinalCommitFailsRestart fails the commit of a sink file in every
// checkpoint, the final one included: the job fails, and a restart
// commits the output of the final checkpoint and stops.
func TestFinalCommitFailsRestart(t *testing.T) {
	mem := vfs.NewMem()
	inj := &failCommit{always: true}
	o := defaultSumJob(2, vfs.NewErrorFS(mem, inj))
	r := o.run(t)
	if r.err == nil || !strings.Contains(r.err.Error(), "final checkpoint: ") || !errors.Is(r.err, vfs.ErrInjected) {
		t.Fatalf("Run = %v, want the final checkpoint's failure to commit", r.err)
	}
	if files := outputFiles(t, mem); files[filepath.Base(inj.final)] != nil {
		t.Fatalf("%s was committed", inj.final)
	}
	o.fs = mem
	r = o.mustRun(t)
	if !strings.Contains(r.log.String(), "is final: the job ran to the end of its input already") {
		t.Errorf("the restart does not say the job is done:\n%s", r.log)
	}
	o.checkOutput(t, mem)
	if h := hiddenFiles(mem); len(h) > 0 {
		t.Errorf("hidden files left: %v", h)
	}
}

// TestCommitFailsThenCrash fails the commit of a sink file after a
// checkpoint's manifest, and crashes right then: the restart resumes from
// that checkpoint and commits the file.
func TestCommitFailsThenCrash(t *testing.T) {
	mem := vfs.NewMem()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var crashed *vfs.MemFS
	inj := &failCommit{onFail: func() {
		crashed = mem.CrashClone()
		cancel()
	}}
	o := defaultSumJob(2, vfs.NewErrorFS(mem, inj))
	o.ctx = ctx
	if r := o.run(t); !stopped(r.err) || crashed == nil {
		t.Fatalf("Run = %v, want it stopped", r.err)
	}
	if files := outputFiles(t, crashed); files[filepath.Base(inj.final)] != nil {
		t.Fatalf("%s was committed", inj.final)
	}
	want := newestIntact(crashed)
	if m, err := (&storage.Storage{FS: crashed, Dir: sumCkptDir}).ReadManifest(want); err != nil || !slices.Contains(sinkFinals(m), inj.final) {
		t.Fatalf("the newest checkpoint %d does not commit %s: %v", want, inj.final, err)
	}
	o2 := defaultSumJob(2, crashed)
	r := o2.mustRun(t)
	if r.restoredID() != want {
		t.Errorf("resumed from checkpoint %d, want %d\n%s", r.restoredID(), want, r.log)
	}
	o2.checkOutput(t, crashed)
}

// sinkFinals lists the final paths of the files a checkpoint commits.
func sinkFinals(m *storage.Manifest) []string {
	var names []string
	for _, n := range m.Nodes {
		for _, s := range n.Sinks {
			for _, p := range s.Pending {
				names = append(names, filepath.Join(sumOutDir, p.Final))
			}
		}
	}
	return names
}

// stopped reports whether err is what Run returns when its context is
// cancelled.
func stopped(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, fault.ErrCanceled)
}

// lockedFS does one operation at a time, so that the log of a RecordingFS
// under it is in the order the operations took effect, whichever
// goroutines did them.
type lockedFS struct {
	mu    *sync.Mutex
	inner vfs.FS
}

func newLockedFS(inner vfs.FS) vfs.FS { return &lockedFS{mu: new(sync.Mutex), inner: inner} }

func (l *lockedFS) file(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &lockedFile{File: f, mu: l.mu}, nil
}

func (l *lockedFS) Create(name string) (vfs.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file(l.inner.Create(name))
}

func (l *lockedFS) Open(name string) (vfs.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file(l.inner.Open(name))
}

func (l *lockedFS) OpenDir(name string) (vfs.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.file(l.inner.OpenDir(name))
}

func (l *lockedFS) Rename(oldname, newname string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner.Rename(oldname, newname)
}

func (l *lockedFS) Remove(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner.Remove(name)
}

func (l *lockedFS) RemoveAll(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner.RemoveAll(name)
}

func (l *lockedFS) Lock(name string) (io.Closer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner.Lock(name)
}

func (l *lockedFS) MkdirAll(name string, perm os.FileMode) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner.MkdirAll(name, perm)
}

func (l *lockedFS) ReadDir(name string) ([]os.DirEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner.ReadDir(name)
}

func (l *lockedFS) Stat(name string) (os.FileInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner.Stat(name)
}

type lockedFile struct {
	vfs.File
	mu *sync.Mutex
}

func (f *lockedFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.File.Write(p)
}

func (f *lockedFile) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.File.Sync()
}

func (f *lockedFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.File.Close()
}
