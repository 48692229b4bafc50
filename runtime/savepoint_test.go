package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// savepointRun runs the sum job and, after record at of its source
// (counted over every subtask in this run), asks for a savepoint into dir
// ("" for the default folder); with stop, the job stops at it. From then
// on each source subtask waits, before its next record, for a barrier to
// be due (which it injects after that record), until it has injected the
// savepoint's barrier, and then until the savepoint's checkpoint is
// complete, so that none reaches the end of its input first (the final
// checkpoint would supersede the savepoint's). A subtask that holds its
// polls (sumJob.holdPolls) does not wait before it polls again: it could
// not inject the barrier it waits for, and the checkpoint under way
// would wait for it. It returns the savepoint's result and the run.
func savepointRun(t *testing.T, o *sumJob, at uint64, dir string, stop bool) (checkpoint.SavepointResult, *sumRun) {
	t.Helper()
	var (
		running   atomic.Pointer[job.Job]
		once      sync.Once
		requested atomic.Bool
		seen      atomic.Uint64
		result    = make(chan checkpoint.SavepointResult, 1)
	)
	o.started = func(j *job.Job) { running.Store(j) }
	o.hook = func(c *sumSource, i uint64) {
		if seen.Add(1) > at {
			once.Do(func() {
				requested.Store(true)
				go func() { result <- <-running.Load().Checkpointer().RequestSavepoint(dir, stop, false) }()
			})
		}
		switch {
		case !requested.Load() || c.savepointDone:
		case c.savepointBarrier > 0:
			c.awaitCommitted(c.savepointBarrier)
			c.savepointDone = true
		case i >= o.holdPolls:
			// The barrier due may be of the checkpoint under way, which
			// the savepoint's follows: then this waits again.
			c.awaitBarrier()
		}
	}
	r := o.run(t)
	o.started, o.hook = nil, nil
	select {
	case res := <-result:
		return res, r
	case <-time.After(jobHangGuard):
		t.Fatalf("no answer to the savepoint request\n%s", r.log)
	}
	panic("unreachable")
}

// TestSavepointStopAndResume stops the job with a savepoint in the middle
// of its input, moves the savepoint elsewhere, and resumes from it with
// another checkpoint directory, another parallelism of the keyed node and
// either backend (a savepoint taken on one restores on the other): the
// committed output is exact. The savepoint refers to nothing outside its
// folder, and the job that took it never deletes it.
func TestSavepointStopAndResume(t *testing.T) {
	for _, from := range backends {
		for _, to := range backends {
			t.Run(from+"-to-"+to, func(t *testing.T) { testSavepointStopAndResume(t, from, to, false) })
		}
	}
}

// TestSavepointMapState is TestSavepointStopAndResume of the job with a
// map state: its entries are in the savepoint, canonical files of their
// own, and restore on either backend at another parallelism.
func TestSavepointMapState(t *testing.T) {
	for _, from := range backends {
		for _, to := range backends {
			t.Run(from+"-to-"+to, func(t *testing.T) { testSavepointStopAndResume(t, from, to, true) })
		}
	}
}

func testSavepointStopAndResume(t *testing.T, from, to string, withMap bool) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.backend = from
	wantFiles := 2
	if withMap {
		o.mapCheck, o.mapTTL, wantFiles = t.Errorf, 3_600_000, 4
	}
	o.interval = time.Hour // only the savepoint takes a checkpoint
	o.pauses, o.holdPolls = nil, 0
	o.n = 200_000 // the stop is over long before the input
	res, r := savepointRun(t, o, 300, "", true)
	if res.Err != nil {
		t.Fatalf("savepoint: %v\n%s", res.Err, r.log)
	}
	var stopped *job.Stopped
	if !errors.As(r.err, &stopped) || stopped.Checkpoint != res.Checkpoint {
		t.Fatalf("Run = %v, want a stop at checkpoint %d\n%s", r.err, res.Checkpoint, r.log)
	}
	if want := filepath.Join(sumCkptDir, storage.SavepointsDir) + "/" + storage.SavepointPrefix; !strings.HasPrefix(res.Path, want) {
		t.Errorf("savepoint at %s, want it in %s", res.Path, want)
	}
	l, err := storage.LoadSavepoint(mem, res.Path)
	if err != nil {
		t.Fatal(err)
	}
	m := l.Manifest
	files, mapFiles := 0, 0
	for _, n := range m.Nodes {
		for _, f := range n.Files {
			files++
			if f.State == "map.M" {
				mapFiles++
			}
			if f.Shared || f.Kind != "" {
				t.Errorf("savepoint file %+v: want a canonical file of its own", f)
			}
		}
		for _, s := range n.Sinks {
			if len(s.Pending) > 0 {
				t.Errorf("savepoint lists pending sink files %+v", s.Pending)
			}
		}
	}
	if files != wantFiles || mapFiles != wantFiles-2 {
		t.Errorf("savepoint has %d state files, %d of the map state, want %d (one per subtask of sum and state)", files, mapFiles, wantFiles)
	}

	// Move it: it is self-contained.
	moved := "/elsewhere/sp"
	if err := mem.MkdirAll("/elsewhere", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mem.Rename(res.Path, moved); err != nil {
		t.Fatal(err)
	}
	next := *o
	next.backend, next.sumP = to, 3
	next.ckptDir = "/ckpt2"
	next.interval = 5 * time.Millisecond
	next.from, next.fromSavepoint = moved, true
	r2 := next.mustRun(t)
	if r2.restoredID() != res.Checkpoint || !strings.Contains(r2.log.String(), "resuming from the savepoint of checkpoint") {
		t.Errorf("resumed from %d, want the savepoint of %d:\n%s", r2.restoredID(), res.Checkpoint, r2.log)
	}
	next.checkOutput(t, mem)
	if _, err := storage.LoadSavepoint(mem, moved); err != nil {
		t.Errorf("the savepoint after the run resumed from it: %v", err)
	}
}

// TestSavepointJobGoesOn takes a savepoint without stopping: the job runs
// to its end, its output exact, and the savepoint stays, listed, restorable
// and not deleted by the job's pruning of checkpoints.
func TestSavepointJobGoesOn(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.retain = 1
	o.pauses = []uint64{40, 120, 200, 280}
	res, r := savepointRun(t, o, 150, "/sp", false)
	if res.Err != nil || r.err != nil {
		t.Fatalf("savepoint: %v, run: %v\n%s", res.Err, r.err, r.log)
	}
	o.checkOutput(t, mem)
	list, err := storage.ListSavepoints(mem, "/sp")
	if err != nil || len(list) != 1 || list[0].Path != res.Path || list[0].Manifest == nil {
		t.Fatalf("savepoints in /sp: %+v, %v; want %s", list, err, res.Path)
	}
	if _, err := storage.LoadSavepoint(mem, res.Path); err != nil {
		t.Fatal(err)
	}
}

// TestSavepointNotACheckpoint: --from-savepoint refuses a checkpoint's
// folder and a savepoint still being written.
func TestSavepointNotACheckpoint(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(1, mem)
	o.mustRun(t)
	next := *o
	next.from, next.fromSavepoint = filepath.Join(sumCkptDir, storage.FolderName(2)), true
	r := next.run(t)
	if r.err == nil || !strings.Contains(r.err.Error(), "is a checkpoint, not a savepoint: resume from it with --from-checkpoint") {
		t.Fatalf("Run = %v, want a checkpoint refused", r.err)
	}
	next.from = "/sp/.savepoint-000002-00000000.inprogress"
	r = next.run(t)
	if r.err == nil || !strings.Contains(r.err.Error(), "still being written") {
		t.Fatalf("Run = %v, want a half savepoint refused", r.err)
	}
}

// TestSavepointRescaleSources takes the whole job, its generator source
// included, from 2 subtasks to 5 and then to 1 through savepoints: the
// sequence numbers are shared out anew each time, and the committed output
// is exactly what the sum of every record once gives.
func TestSavepointRescaleSources(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.interval = time.Hour // only the savepoints take checkpoints
	o.pauses, o.holdPolls = nil, 0
	o.n = 60_000
	o.keys = 101
	at := uint64(2000)
	for _, p := range []int{2, 5} {
		o.p = p
		res, r := savepointRun(t, o, at, "", true)
		var stopped *job.Stopped
		if res.Err != nil || !errors.As(r.err, &stopped) {
			t.Fatalf("p=%d: savepoint %v, run %v\n%s\n%s", p, res.Err, r.err, r.log, r.j.Summary())
		}
		o.from, o.fromSavepoint = res.Path, true
		at = 1500
	}
	o.p = 1
	o.interval = 5 * time.Millisecond
	r := o.mustRun(t)
	if !strings.Contains(r.log.String(), "resuming from the savepoint") {
		t.Errorf("the last run did not resume from the savepoint:\n%s", r.log)
	}
	o.checkOutput(t, mem)
}

// TestSavepointRerunResumesDescendant: a run started from a savepoint and
// stopped (or killed) after checkpoints of its own, started again with the
// same command line (--from-savepoint), resumes from its newest
// checkpoint, not from the savepoint.
func TestSavepointRerunResumesDescendant(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.interval = time.Hour
	o.pauses, o.holdPolls = nil, 0
	o.n = 100_000
	res, _ := savepointRun(t, o, 2000, "", true)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	o.from, o.fromSavepoint, o.ckptDir = res.Path, true, "/ckpt2"
	res2, r := savepointRun(t, o, 2000, "/other", true)
	var stopped *job.Stopped
	if res2.Err != nil || !errors.As(r.err, &stopped) {
		t.Fatalf("second savepoint %v, run %v", res2.Err, r.err)
	}
	o.interval = 5 * time.Millisecond
	r = o.mustRun(t)
	if r.restoredID() != stopped.Checkpoint || !strings.Contains(r.log.String(), "descends from savepoint") {
		t.Errorf("resumed from %d, want %d, the newest descendant of the savepoint:\n%s", r.restoredID(), stopped.Checkpoint, r.log)
	}
	o.checkOutput(t, mem)
}

// TestFileSourceRescaleResume crashes the copy job (a file source with a
// file sink) at 2 subtasks after a checkpoint, resumes it at 5, crashes it
// again, and runs it to the end at 1: the files in progress and those not
// started are dealt out anew each time, and the committed output is every
// input line exactly once.
func TestFileSourceRescaleResume(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 6 {
		content, lines := numberedLines(fmt.Sprintf("f%d", i), 800)
		writeInput(t, filepath.Join(dir, "in", fmt.Sprintf("in-%d.txt", i)), content)
		want = append(want, lines...)
	}
	base := int64(0)
	for _, p := range []int{2, 5, 1} {
		ctx, cancel := context.WithCancel(context.Background())
		o := &copyJob{dir: dir, path: filepath.Join(dir, "in"), p: p, ctx: ctx}
		if p != 1 {
			committed := base
			o.hook = func(c *copyChain, i int) {
				switch i {
				case 100: // every subtask takes part in the next checkpoint
					c.await(c.src.Ctl().BarrierDue)
				case 200: // which completes before any goes on
					c.await(func() bool { return c.j.Checkpointer().Committed() > committed })
					if c.task.Subtask() == 0 {
						cancel()
					}
				}
			}
		}
		j, err := o.run(t)
		cancel()
		if l := j.Checkpointer().Restored(); base > 0 && (l == nil || l.Manifest.ID < base) {
			t.Fatalf("p=%d: resumed from %v, want checkpoint %d or later", p, l, base)
		}
		if p == 1 {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if !stopped(err) {
			t.Fatalf("p=%d: Run = %v, want it stopped", p, err)
		}
		base = j.Checkpointer().Committed()
	}
	got := (&copyJob{dir: dir}).committedLines(t)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("committed %d lines, want the %d input lines once each", len(got), len(want))
	}
}

// TestSavepointForks starts two jobs from one savepoint, each with a job
// folder of its own (checkpoints and output), one at another parallelism:
// both write the exact output in their own folder, and neither touches
// the original job's output, the other's, or the savepoint.
func TestSavepointForks(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.interval = time.Hour
	o.pauses, o.holdPolls = nil, 0
	o.n = 100_000
	res, _ := savepointRun(t, o, 2000, "/sp", true)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	original := outputFiles(t, mem)
	before, err := vfs.ReadFile(mem, filepath.Join(res.Path, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fork := range []struct {
		dir string
		p   int
	}{{"a", 2}, {"b", 3}} {
		f := *o
		f.dir, f.sumP, f.interval = fork.dir, fork.p, 5*time.Millisecond
		f.from, f.fromSavepoint = res.Path, true
		if r := f.mustRun(t); r.restoredID() != res.Checkpoint {
			t.Errorf("fork %s resumed from %d, want %d", fork.dir, r.restoredID(), res.Checkpoint)
		}
		// Its own folder holds the output from the savepoint on: the
		// original's up to it, and this fork's after it, are the whole.
		got := map[string][]byte{}
		for name, data := range original {
			got["orig/"+name] = data
		}
		for name, data := range outputFilesIn(t, mem, f.outDir()) {
			got[fork.dir+"/"+name] = data
		}
		lines := map[string]int{}
		for _, data := range got {
			for line := range strings.Lines(string(data)) {
				lines[line]++
			}
		}
		total := 0
		for k, n := range f.wantCounts() {
			total += n
			for i := 1; i <= n; i++ {
				if l := fmt.Sprintf("%d,%d\n", k, i); lines[l] != 1 {
					t.Fatalf("fork %s: line %q committed %d times, want once", fork.dir, l, lines[l])
				}
			}
		}
		if len(lines) != total {
			t.Errorf("fork %s: %d distinct lines, want %d", fork.dir, len(lines), total)
		}
	}
	if after := outputFiles(t, mem); !maps.EqualFunc(original, after, bytes.Equal) {
		t.Errorf("the forks changed the original job's output")
	}
	if after, err := vfs.ReadFile(mem, filepath.Join(res.Path, "MANIFEST")); err != nil || !bytes.Equal(before, after) {
		t.Errorf("the savepoint changed: %v", err)
	}
}
