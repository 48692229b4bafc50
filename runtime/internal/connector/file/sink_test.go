package file

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// memSinkJob is a job with the file sink "out" writing to /out on fsys.
func memSinkJob(t *testing.T, mode string, fsys vfs.FS) *connectortest.Env {
	t.Helper()
	j := connectortest.New(t, 2, connectortest.SinkNode("out", "file", map[string]string{"path": sumOutDir}))
	j.Config.Checkpoint.Mode = mode
	j.SetFS(fsys)
	return j
}

// listDir returns "name=content" for every file of dir.
func listDir(t *testing.T, fsys vfs.FS, dir string) []string {
	t.Helper()
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		data, err := vfs.ReadFile(fsys, filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Name()+"="+strings.ReplaceAll(string(data), "\n", "|"))
	}
	return out
}

// runAsync runs the asynchronous part of a snapshot, as the writer does.
func runAsync(t *testing.T, s *checkpoint.Snapshot) {
	t.Helper()
	if err := s.RunAsync(); err != nil {
		t.Fatalf("pre-commit: %v", err)
	}
}

// commit commits the sink files of a snapshot, as the coordinator does
// once the checkpoint is complete.
func commit(t *testing.T, j *connectortest.Env, s *checkpoint.Snapshot) {
	t.Helper()
	for _, st := range s.Sinks() {
		if err := (committer{}).Commit(j.Ckpt().FS(), j.Node(0), st); err != nil {
			t.Fatal(err)
		}
	}
	j.Ckpt().CommittedID = s.ID
}

func pendingSeqs(s *checkpoint.Snapshot) []uint64 {
	var seqs []uint64
	for _, st := range s.Sinks() {
		for _, p := range st.Pending {
			seqs = append(seqs, p.Seq)
		}
	}
	return seqs
}

func TestFileSinkTwoPhaseCommit(t *testing.T) {
	mem := vfs.NewMem()
	j := memSinkJob(t, config.ExactlyOnce, mem)
	s := NewSink(j, 0, 1, format.EncodeString)
	s.Write("a")
	s.Write("b")
	s.Flush()
	if got, want := listDir(t, mem, sumOutDir), []string{".part-00001-0000000000.inprogress=a|b|"}; !slices.Equal(got, want) {
		t.Errorf("while writing: %q, want %q", got, want)
	}

	snap := &checkpoint.Snapshot{ID: 1}
	s.PreCommit(snap, 0)
	if s.pw.cur != nil {
		t.Error("PreCommit left the file open")
	}
	// The files are named within the sink's directory, which the
	// checkpoint holds only as it was set.
	want := storage.SinkState{Subtask: 1, NextSeq: 1, Path: sumOutDir, Pending: []storage.PendingFile{
		{Seq: 0, Pending: ".part-00001-0000000000.pending", Final: "part-00001-0000000000"},
	}}
	if len(snap.Sinks()) != 1 || !sinkStateEqual(snap.Sinks()[0], want) {
		t.Fatalf("sink state %+v, want %+v", snap.Sinks(), want)
	}
	// Records after the barrier go to the next file.
	s.Write("c")
	s.Flush()
	runAsync(t, snap)
	if got, want := listDir(t, mem, sumOutDir), []string{".part-00001-0000000000.pending=a|b|", ".part-00001-0000000001.inprogress=c|"}; !slices.Equal(got, want) {
		t.Errorf("pre-committed: %q, want %q", got, want)
	}
	// The pending file is durable before the checkpoint's manifest is
	// written.
	if got, want := listDir(t, mem.CrashClone(), sumOutDir), []string{".part-00001-0000000000.pending=a|b|", ".part-00001-0000000001.inprogress="}; !slices.Equal(got, want) {
		t.Errorf("after a crash: %q, want %q", got, want)
	}
	if files := visibleFiles(mem); len(files) != 0 {
		t.Errorf("output visible before the checkpoint is complete: %v", files)
	}
	commit(t, j, snap)
	if got, want := listDir(t, mem, sumOutDir), []string{".part-00001-0000000001.inprogress=c|", "part-00001-0000000000=a|b|"}; !slices.Equal(got, want) {
		t.Errorf("committed: %q, want %q", got, want)
	}
	if got, want := listDir(t, mem.CrashClone(), sumOutDir), []string{".part-00001-0000000001.inprogress=", "part-00001-0000000000=a|b|"}; !slices.Equal(got, want) {
		t.Errorf("committed, after a crash: %q, want %q", got, want)
	}
	// Committing again (as recovery does) changes nothing.
	commit(t, j, snap)
	if got, want := listDir(t, mem, sumOutDir), []string{".part-00001-0000000001.inprogress=c|", "part-00001-0000000000=a|b|"}; !slices.Equal(got, want) {
		t.Errorf("committed twice: %q, want %q", got, want)
	}

	// The final snapshot pre-commits the rest; End has nothing left.
	final := &checkpoint.Snapshot{Final: true}
	s.PreCommit(final, 0)
	s.End()
	runAsync(t, final)
	commit(t, j, final)
	if got, want := listDir(t, mem, sumOutDir), []string{"part-00001-0000000000=a|b|", "part-00001-0000000001=c|"}; !slices.Equal(got, want) {
		t.Errorf("after the final checkpoint: %q, want %q", got, want)
	}
}

func sinkStateEqual(a, b storage.SinkState) bool {
	return a.Subtask == b.Subtask && a.NextSeq == b.NextSeq && a.Path == b.Path && slices.Equal(a.Pending, b.Pending)
}

func TestPartNames(t *testing.T) {
	cases := []struct {
		name     string
		sub      int
		seq      uint64
		hidden   bool
		ok       bool
		isOutput bool
	}{
		{"part-0-0", 0, 0, false, true, true},
		{"part-12-345", 12, 345, false, true, true},
		{".part-3-7.inprogress", 3, 7, true, true, false},
		{".part-3-7.pending", 3, 7, true, true, false},
		{".part-3-7", 0, 0, false, false, false},
		{".part-3-7.tmp", 0, 0, false, false, false},
		{"part-3", 0, 0, false, false, true},
		{"part-x-1", 0, 0, false, false, true},
		{"part-1--1", 0, 0, false, false, true},
		{"README", 0, 0, false, false, true},
		{".DS_Store", 0, 0, false, false, false},
		// What this version writes, zero-padded.
		{"part-00012-0000000345", 12, 345, false, true, true},
		{".part-00003-0000000007.pending", 3, 7, true, true, false},
		{"part-+1-2", 0, 0, false, false, true},
	}
	for _, c := range cases {
		sub, seq, hidden, ok := parsePartName(c.name)
		if sub != c.sub || seq != c.seq || hidden != c.hidden || ok != c.ok {
			t.Errorf("parsePartName(%q) = %d, %d, %v, %v; want %d, %d, %v, %v", c.name, sub, seq, hidden, ok, c.sub, c.seq, c.hidden, c.ok)
		}
		// The output is exactly the files whose names do not start with
		// '.': every name the sink gives a file before its commit does.
		if got := !strings.HasPrefix(c.name, "."); got != c.isOutput {
			t.Errorf("%q counted as output: %v", c.name, got)
		}
	}
	j := memSinkJob(t, config.ExactlyOnce, vfs.NewMem())
	s := NewSink(j, 0, 4, format.EncodeString)
	s.pw.nextSeq = 9
	s.Write("x")
	s.PreCommit(&checkpoint.Snapshot{ID: 1}, 0)
	p := s.pw.pending[0]
	for name, want := range map[string]string{p.inProgress: ".part-00004-0000000009.inprogress", p.Pending: ".part-00004-0000000009.pending", p.Final: "part-00004-0000000009"} {
		if name != want {
			t.Errorf("file name %s, want %s", name, want)
		}
		sub, seq, hidden, ok := parsePartName(name)
		if !ok || sub != 4 || seq != 9 || hidden != strings.HasPrefix(want, ".") {
			t.Errorf("parsePartName(%s) = %d, %d, %v, %v", want, sub, seq, hidden, ok)
		}
	}
}

// TestPartNamesSort checks that the names of a sink's part files sort in
// the order they were written (by subtask, then by number), also past 9
// and for numbers as large as a long-lived job reaches: part-0-10 must not
// come before part-0-2.
func TestPartNamesSort(t *testing.T) {
	subs := []int{0, 1, 2, 9, 10, 11, 99, 100, 32767}
	seqs := []uint64{0, 1, 2, 9, 10, 11, 99, 100, 12345, 999_999_999, 1_000_000_000, 9_999_999_999}
	var want []string
	for _, sub := range subs {
		for _, seq := range seqs {
			name := partName(sub, seq)
			want = append(want, name)
			gotSub, gotSeq, hidden, ok := parsePartName(name)
			if !ok || hidden || gotSub != sub || gotSeq != seq {
				t.Errorf("parsePartName(%q) = %d, %d, %v, %v; want %d, %d", name, gotSub, gotSeq, hidden, ok, sub, seq)
			}
		}
	}
	if got := slices.Sorted(slices.Values(want)); !slices.Equal(got, want) {
		t.Errorf("part names sort as\n%q\nwant\n%q", got, want)
	}
}

// TestFileSinkPendingUntilCommitted checks that every snapshot lists the
// sink's files that no completed checkpoint covers, and no other.
func TestFileSinkPendingUntilCommitted(t *testing.T) {
	mem := vfs.NewMem()
	j := memSinkJob(t, config.ExactlyOnce, mem)
	s := NewSink(j, 0, 0, format.EncodeString)

	s.Write("a")
	s1 := &checkpoint.Snapshot{ID: 1}
	s.PreCommit(s1, 0)
	if got := pendingSeqs(s1); !slices.Equal(got, []uint64{0}) {
		t.Errorf("checkpoint 1 lists %v, want [0]", got)
	}
	// Checkpoint 1 fails before its asynchronous part runs (say a state
	// file could not be written): the file is still in progress, and the
	// next checkpoint takes it.
	s.Write("b")
	s2 := &checkpoint.Snapshot{ID: 2}
	s.PreCommit(s2, 0)
	if got := pendingSeqs(s2); !slices.Equal(got, []uint64{0, 1}) {
		t.Errorf("checkpoint 2, after 1 failed, lists %v, want [0 1]", got)
	}
	runAsync(t, s2)
	// Checkpoint 2 fails after its pre-commit (say at the manifest).
	s.Write("c")
	s3 := &checkpoint.Snapshot{ID: 3}
	s.PreCommit(s3, 0)
	if got := pendingSeqs(s3); !slices.Equal(got, []uint64{0, 1, 2}) {
		t.Errorf("checkpoint 3, after 2 failed, lists %v, want [0 1 2]", got)
	}
	runAsync(t, s3)
	commit(t, j, s3)
	if got, want := listDir(t, mem, sumOutDir), []string{"part-00000-0000000000=a|", "part-00000-0000000001=b|", "part-00000-0000000002=c|"}; !slices.Equal(got, want) {
		t.Errorf("after checkpoint 3: %q, want %q", got, want)
	}
	// Files of a completed checkpoint drop out of the list.
	s.Write("d")
	s4 := &checkpoint.Snapshot{ID: 4}
	s.PreCommit(s4, 0)
	if got := pendingSeqs(s4); !slices.Equal(got, []uint64{3}) {
		t.Errorf("checkpoint 4 lists %v, want [3]", got)
	}
	if s4.Sinks()[0].NextSeq != 4 {
		t.Errorf("NextSeq %d, want 4", s4.Sinks()[0].NextSeq)
	}
	runAsync(t, s4)
	commit(t, j, s4)
	// A checkpoint with nothing new lists nothing and has no work.
	s5 := &checkpoint.Snapshot{ID: 5}
	s.PreCommit(s5, 0)
	if got := pendingSeqs(s5); len(got) != 0 || len(s5.Sinks()) != 1 {
		t.Errorf("an empty checkpoint lists %v with %d sink states; want none and one", got, len(s5.Sinks()))
	}
}

// TestFileSinkCommitFailsThenLater checks that a file whose commit failed
// after the manifest (the checkpoint is complete, but the job does not
// know its output committed) is listed and committed again by the next
// checkpoint.
func TestFileSinkCommitFailsThenLater(t *testing.T) {
	mem := vfs.NewMem()
	j := memSinkJob(t, config.ExactlyOnce, mem)
	s := NewSink(j, 0, 0, format.EncodeString)
	s.Write("a")
	s1 := &checkpoint.Snapshot{ID: 1}
	s.PreCommit(s1, 0)
	runAsync(t, s1)
	// The coordinator's commit of checkpoint 1 fails: committed stays 0.
	s.Write("b")
	s2 := &checkpoint.Snapshot{ID: 2}
	s.PreCommit(s2, 0)
	if got := pendingSeqs(s2); !slices.Equal(got, []uint64{0, 1}) {
		t.Errorf("checkpoint 2 lists %v, want [0 1]", got)
	}
	runAsync(t, s2)
	commit(t, j, s2)
	if got, want := listDir(t, mem, sumOutDir), []string{"part-00000-0000000000=a|", "part-00000-0000000001=b|"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// parts returns n closed in-progress files of a sink, as PreCommit hands
// them to preCommit.
func parts(t *testing.T, mem *vfs.MemFS, n int) []pendingPart {
	t.Helper()
	j := memSinkJob(t, config.ExactlyOnce, mem)
	s := NewSink(j, 0, 0, format.EncodeString)
	for i := range n {
		s.Write(strings.Repeat("x", i+1))
		s.pw.closeCurrent()
	}
	return slices.Clone(s.pw.pending)
}

func TestPreCommitIdempotent(t *testing.T) {
	ref := vfs.NewMem()
	if err := preCommit(ref, sumOutDir, parts(t, ref, 3)); err != nil {
		t.Fatal(err)
	}
	want := listDir(t, ref, sumOutDir)
	if !slices.Equal(want, []string{".part-00000-0000000000.pending=x|", ".part-00000-0000000001.pending=xx|", ".part-00000-0000000002.pending=xxx|"}) {
		t.Fatalf("pre-committed: %q", want)
	}

	t.Run("twice", func(t *testing.T) {
		mem := vfs.NewMem()
		ps := parts(t, mem, 3)
		for range 2 {
			if err := preCommit(mem, sumOutDir, ps); err != nil {
				t.Fatal(err)
			}
			if got := listDir(t, mem, sumOutDir); !slices.Equal(got, want) {
				t.Errorf("%q, want %q", got, want)
			}
		}
	})
	for _, op := range []vfs.OpKind{vfs.OpOpen, vfs.OpSync, vfs.OpClose, vfs.OpRename, vfs.OpOpenDir} {
		t.Run("after a failed "+op.String(), func(t *testing.T) {
			mem := vfs.NewMem()
			ps := parts(t, mem, 3)
			sub := ".part-00000-0000000001"
			if op == vfs.OpOpenDir {
				sub = sumOutDir
			}
			efs := vfs.NewErrorFS(mem, vfs.OnceAt(op, sub, nil))
			if err := preCommit(efs, sumOutDir, ps); !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("preCommit = %v, want the injected error", err)
			}
			if err := preCommit(efs, sumOutDir, ps); err != nil {
				t.Fatalf("preCommit again: %v", err)
			}
			if got := listDir(t, mem, sumOutDir); !slices.Equal(got, want) {
				t.Errorf("%q, want %q", got, want)
			}
			if got := listDir(t, mem.CrashClone(), sumOutDir); !slices.Equal(got, want) {
				t.Errorf("after a crash: %q, want %q", got, want)
			}
		})
	}
	t.Run("after commit", func(t *testing.T) {
		mem := vfs.NewMem()
		ps := parts(t, mem, 2)
		if err := preCommit(mem, sumOutDir, ps); err != nil {
			t.Fatal(err)
		}
		st := storage.SinkState{Pending: []storage.PendingFile{ps[0].PendingFile, ps[1].PendingFile}}
		n := connectortest.SinkNode("out", "file", map[string]string{"path": sumOutDir})
		if err := (committer{}).Commit(mem, &n, st); err != nil {
			t.Fatal(err)
		}
		if err := preCommit(mem, sumOutDir, ps); err != nil {
			t.Fatal(err)
		}
		if got, want := listDir(t, mem, sumOutDir), []string{"part-00000-0000000000=x|", "part-00000-0000000001=xx|"}; !slices.Equal(got, want) {
			t.Errorf("%q, want %q", got, want)
		}
	})
}

// TestPreCommitConcurrent runs two pre-commits of the same files at once,
// as two writers do when the final snapshot of a subtask is written while
// its snapshot of a checkpoint that the final one superseded still is:
// both succeed, and the files are durable under their pending names when
// either returns.
func TestPreCommitConcurrent(t *testing.T) {
	want := []string{".part-00000-0000000000.pending=x|", ".part-00000-0000000001.pending=xx|"}
	t.Run("other renames first", func(t *testing.T) {
		mem := vfs.NewMem()
		ps := parts(t, mem, 2)
		var inner error
		fired := false
		efs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
			if op.Kind == vfs.OpRename && !fired {
				// The other writer does all of its work between this
				// writer's sync of the file and its rename.
				fired = true
				inner = preCommit(mem, sumOutDir, ps)
			}
			return nil
		}))
		if err := preCommit(efs, sumOutDir, ps); err != nil {
			t.Errorf("preCommit: %v", err)
		}
		if inner != nil {
			t.Errorf("the other preCommit: %v", inner)
		}
		if got := listDir(t, mem, sumOutDir); !slices.Equal(got, want) {
			t.Errorf("%q, want %q", got, want)
		}
	})
	t.Run("other finds it renamed", func(t *testing.T) {
		mem := vfs.NewMem()
		ps := parts(t, mem, 2)
		var crashed *vfs.MemFS
		efs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
			if op.Kind == vfs.OpOpenDir && crashed == nil {
				// This writer has renamed both files but not synced the
				// directory yet; the other writer, finding them pending,
				// returns, and its checkpoint goes on to its manifest.
				if err := preCommit(mem, sumOutDir, ps); err != nil {
					t.Errorf("the other preCommit: %v", err)
				}
				crashed = mem.CrashClone()
			}
			return nil
		}))
		if err := preCommit(efs, sumOutDir, ps); err != nil {
			t.Fatal(err)
		}
		if got := listDir(t, crashed, sumOutDir); !slices.Equal(got, want) {
			t.Errorf("after a crash once the other preCommit returned: %q, want %q", got, want)
		}
	})
}

func TestFileSinkModeNone(t *testing.T) {
	mem := vfs.NewMem()
	j := memSinkJob(t, config.NoCheckpoints, mem)
	s := NewSink(j, 0, 0, format.EncodeString)
	s.Write("a")
	s.Flush()
	if got, want := listDir(t, mem, sumOutDir), []string{"part-00000-0000000000=a|"}; !slices.Equal(got, want) {
		t.Errorf("while writing: %q, want %q", got, want)
	}
	s.Write("b")
	// With no checkpoints PreCommit only flushes: no file is closed,
	// nothing is pending.
	snap := &checkpoint.Snapshot{ID: 1}
	s.PreCommit(snap, 0)
	if len(snap.Sinks()) != 0 || s.pw.cur == nil || len(s.pw.pending) != 0 {
		t.Errorf("PreCommit in mode none: %d sink states, open %v, %d pending", len(snap.Sinks()), s.pw.cur != nil, len(s.pw.pending))
	}
	if err := snap.RunAsync(); err != nil {
		t.Errorf("PreCommit in mode none left asynchronous work that fails: %v", err)
	}
	s.Write("c")
	s.End()
	if got, want := listDir(t, mem, sumOutDir), []string{"part-00000-0000000000=a|b|c|"}; !slices.Equal(got, want) {
		t.Errorf("after End: %q, want %q", got, want)
	}
	if h := hiddenFiles(mem); len(h) != 0 {
		t.Errorf("hidden files in mode none: %v", h)
	}
}

// TestFileSinkRestoredNextSeq checks that a sink subtask resuming from a
// checkpoint numbers its files after the checkpoint's, and that a subtask
// new in this run numbers them above every other's.
func TestFileSinkRestoredNextSeq(t *testing.T) {
	j := memSinkJob(t, config.ExactlyOnce, vfs.NewMem())
	j.Restore(t, &storage.Manifest{ID: 3, MaxParallelism: 128, Nodes: []storage.NodeState{{UID: j.Node(0).UID, Sinks: []storage.SinkState{
		{Subtask: 0, NextSeq: 5}, {Subtask: 1, NextSeq: 8},
	}}}})
	for sub, want := range []uint64{5, 8, 8} {
		if got := NewSink(j, 0, sub, format.EncodeString).pw.nextSeq; got != want {
			t.Errorf("subtask %d: next file %d, want %d", sub, got, want)
		}
	}
}

// sumOutDir is where the sink of the tests writes, on a MemFS.
const sumOutDir = "/out"

// hiddenFiles lists the sink directory's files whose names start with '.'.
func hiddenFiles(fsys vfs.FS) []string {
	entries, _ := fsys.ReadDir(sumOutDir)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// visibleFiles lists the sink directory's committed files: those whose
// names do not start with '.'.
func visibleFiles(fsys vfs.FS) []string {
	entries, _ := fsys.ReadDir(sumOutDir)
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestCommitDirectory checks where Commit renames: in the sink's
// directory as this run has it, or, for a sink this version of the job no
// longer has, as the checkpoint recorded it; and never outside it.
func TestCommitDirectory(t *testing.T) {
	mem := vfs.NewMem()
	for _, dir := range []string{"/now", "/then"} {
		if err := mem.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileSync(mem, filepath.Join(dir, ".part-00000-0000000000.pending"), []byte("x\n")); err != nil {
			t.Fatal(err)
		}
	}
	st := storage.SinkState{Path: "/then", Pending: []storage.PendingFile{{Pending: ".part-00000-0000000000.pending", Final: "part-00000-0000000000"}}}
	n := connectortest.SinkNode("out", "file", map[string]string{"path": "/now"})
	if err := (committer{}).Commit(mem, &n, st); err != nil {
		t.Fatal(err)
	}
	if got, want := listDir(t, mem, "/now"), []string{"part-00000-0000000000=x|"}; !slices.Equal(got, want) {
		t.Errorf("/now: %q, want %q", got, want)
	}
	if got, want := listDir(t, mem, "/then"), []string{".part-00000-0000000000.pending=x|"}; !slices.Equal(got, want) {
		t.Errorf("/then, which this run's settings do not name: %q, want %q", got, want)
	}
	if err := (committer{}).Commit(mem, nil, st); err != nil {
		t.Fatal(err)
	}
	if got, want := listDir(t, mem, "/then"), []string{"part-00000-0000000000=x|"}; !slices.Equal(got, want) {
		t.Errorf("/then, for a sink the job no longer has: %q, want %q", got, want)
	}
	bad := storage.SinkState{Pending: []storage.PendingFile{{Pending: "../now/part-00000-0000000000", Final: "stolen"}}}
	if err := (committer{}).Commit(mem, &n, bad); err == nil || !strings.Contains(err.Error(), "not a file name in the sink's directory") {
		t.Errorf("Commit of a path = %v, want it refused", err)
	}
}

// TestFileSinkHeader: with a header, every part file starts with it,
// and a file that gets no record is not started.
func TestFileSinkHeader(t *testing.T) {
	mem := vfs.NewMem()
	j := memSinkJob(t, config.ExactlyOnce, mem)
	s := NewSink(j, 0, 0, format.EncodeString)
	s.SetHeader([]byte("h1,h2"))
	s.Write("a")
	snap := &checkpoint.Snapshot{ID: 1}
	s.PreCommit(snap, 0)
	runAsync(t, snap)
	commit(t, j, snap)
	empty := &checkpoint.Snapshot{ID: 2}
	s.PreCommit(empty, 0)
	runAsync(t, empty)
	commit(t, j, empty)
	s.Write("b")
	s.Write("c")
	final := &checkpoint.Snapshot{Final: true}
	s.PreCommit(final, 0)
	s.End()
	runAsync(t, final)
	commit(t, j, final)
	if got, want := listDir(t, mem, sumOutDir), []string{"part-00000-0000000000=h1,h2|a|", "part-00000-0000000001=h1,h2|b|c|"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestFileSinkClosedWhenJobEnds: when the job fails elsewhere, the file
// the sink was writing is closed (a job restarted in its process kept a
// descriptor per failed attempt); a file the sink closed itself is not
// closed again.
func TestFileSinkClosedWhenJobEnds(t *testing.T) {
	mem := vfs.NewMem()
	j := memSinkJob(t, config.ExactlyOnce, mem)
	s := NewSink(j, 0, 0, format.EncodeString)
	s.Write("a")
	f := s.pw.cur
	j.Cancel(errors.New("another operator failed"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := f.Write([]byte("x"))
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job ended and the sink's file is still open")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFileSinkOpenedAfterJobEnded: a sink that opens its file after the
// end of the job closed what it had (it still held records to write)
// has that file closed too, not left to its finalizer, and the write
// that then fails ends the subtask as canceled, not failed.
func TestFileSinkOpenedAfterJobEnded(t *testing.T) {
	mem := vfs.NewMem()
	j := memSinkJob(t, config.ExactlyOnce, mem)
	s := NewSink(j, 0, 0, format.EncodeString)
	j.Cancel(errors.New("another operator failed"))
	deadline := time.Now().Add(10 * time.Second)
	for !shut(&s.pw.live) {
		if time.Now().After(deadline) {
			t.Fatal("the job ended and its files were not closed")
		}
		time.Sleep(time.Millisecond)
	}
	s.Write("a")
	if _, err := s.pw.cur.Write([]byte("x")); err == nil {
		t.Fatal("the file opened after the end of the job is open")
	}
	p := recovered(func() { s.Flush() })
	if err, ok := fault.FromPanic("out", 0, p).(error); !ok || !errors.Is(err, fault.ErrCanceled) {
		t.Errorf("the write into the closed file ended the subtask with %v, want it canceled", p)
	}
}

// recovered runs f and returns what it panicked with.
func recovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// shut reports whether the end of the job has closed l's file.
func shut(l *liveFile) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shut
}
