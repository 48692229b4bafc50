package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

func TestSumJobExactlyOnce(t *testing.T) {
	for _, p := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			mem := vfs.NewMem()
			o := defaultSumJob(p, mem)
			o.mustRun(t)
			o.checkOutput(t, mem)
			if h := hiddenFiles(mem); len(h) > 0 {
				t.Errorf("hidden files left after a completed run: %v", h)
			}
			ms := checkpoints(t, mem)
			var complete []int64
			for id, m := range ms {
				if m == nil {
					t.Errorf("checkpoint %d has no manifest after a completed run", id)
					continue
				}
				complete = append(complete, id)
			}
			slices.Sort(complete)
			// Two pause points before the last are two checkpoints that
			// the final one cannot supersede.
			if len(complete) < 3 || !ms[complete[len(complete)-1]].Final {
				t.Errorf("checkpoints %v, want at least two and a final one", complete)
			}
		})
	}
}

// crashPoint is the filesystem a crash would leave just before one
// operation of a run.
type crashPoint struct {
	op vfs.Op
	fs *vfs.MemFS
	// committed is the newest checkpoint the run had completed, its output
	// committed: it must survive the crash.
	committed int64
}

// crashRecorder is an injector that fails nothing and keeps a crash point
// before every operation that changes the filesystem.
type crashRecorder struct {
	mem *vfs.MemFS
	job atomic.Pointer[Job]

	mu     sync.Mutex
	points []crashPoint
}

func (c *crashRecorder) MaybeError(op vfs.Op) error {
	switch op.Kind {
	case vfs.OpOpen, vfs.OpOpenDir, vfs.OpReadDir, vfs.OpStat, vfs.OpRead:
		return nil
	}
	var committed int64
	if j := c.job.Load(); j != nil {
		committed = j.Checkpointer().Committed()
	}
	clone := c.mem.CrashClone()
	c.mu.Lock()
	c.points = append(c.points, crashPoint{op: op, fs: clone, committed: committed})
	c.mu.Unlock()
	return nil
}

// taken returns the crash points so far. Run may return before a writer
// of a checkpoint superseded by the final one has finished, so points may
// still come in.
func (c *crashRecorder) taken() []crashPoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.points)
}

// recordCrashes makes o run on mem through a crashRecorder.
func recordCrashes(o *sumJob, mem *vfs.MemFS) *crashRecorder {
	c := &crashRecorder{mem: mem}
	o.fs = vfs.NewErrorFS(mem, c)
	o.started = func(j *Job) { c.job.Store(j) }
	return c
}

// newestIntact is the newest checkpoint of fsys with an intact manifest,
// 0 for none.
func newestIntact(fsys vfs.FS) int64 { return newestIntactIn(fsys, sumCkptDir) }

// newestIntactIn is newestIntact of the checkpoint directory dir.
func newestIntactIn(fsys vfs.FS, dir string) int64 {
	st := &storage.Storage{FS: fsys, Dir: dir}
	entries, _ := st.List()
	for i := len(entries) - 1; i >= 0; i-- {
		if _, err := st.Load(entries[i].ID); err == nil {
			return entries[i].ID
		}
	}
	return 0
}

// checkRecovery restarts the job on the filesystem a crash left, runs it
// to its end and checks the output: exactly once, with every file that
// was committed at the crash still there, unchanged, and resumed from a
// checkpoint no older than the newest one completed before the crash.
func checkRecovery(t *testing.T, o *sumJob, cp crashPoint, nested bool) {
	t.Helper()
	before := outputFiles(t, cp.fs)
	intact := newestIntact(cp.fs)
	if intact < cp.committed {
		t.Errorf("crash before %v: checkpoint %d was complete, but the newest that survives is %d", cp.op, cp.committed, intact)
	}
	o2 := *o
	o2.fs = cp.fs
	var rec *crashRecorder
	if nested {
		rec = recordCrashes(&o2, cp.fs)
	}
	r := o2.run(t)
	if r.err != nil {
		t.Fatalf("crash before %v: the restart failed: %v\nlog:\n%s", cp.op, r.err, r.log)
	}
	if got := r.restoredID(); got != intact {
		t.Errorf("crash before %v: resumed from checkpoint %d, want %d", cp.op, got, intact)
	}
	o.checkOutput(t, cp.fs)
	after := outputFiles(t, cp.fs)
	for name, data := range before {
		if !bytes.Equal(after[name], data) {
			t.Errorf("crash before %v: committed file %s changed in recovery:\n%q\nnow\n%q", cp.op, name, data, after[name])
		}
	}
	if h := hiddenFiles(cp.fs); len(h) > 0 {
		t.Errorf("crash before %v: hidden files left after recovery: %v", cp.op, h)
	}
	checkNoStrayFiles(t, cp.fs, sumCkptDir)
	if t.Failed() {
		t.Logf("log of the restart:\n%s", r.log)
		t.FailNow()
	}
	if !nested {
		return
	}
	if points := rec.taken(); len(points) > 0 {
		// A crash in the middle of recovery.
		checkRecovery(t, o, points[len(points)/2], false)
	}
}

// TestCrashRecovery crashes a run before each of its file operations and
// checks that a restart from what the crash left writes exactly the
// output of a run without a crash.
func TestCrashRecovery(t *testing.T) {
	for _, c := range []struct {
		backend string
		p       int
	}{{"memory", 1}, {"memory", 2}, {"pebble", 2}} {
		t.Run(fmt.Sprint(c.backend, "/p=", c.p), func(t *testing.T) {
			p := c.p
			mem := vfs.NewMem()
			o := defaultSumJob(p, nil)
			o.backend = c.backend
			rec := recordCrashes(o, mem)
			o.mustRun(t)
			o.checkOutput(t, mem)
			end := mem.CrashClone()
			points := append(rec.taken(), crashPoint{op: vfs.Op{Path: "(after the run)"}, fs: end, committed: newestIntact(end)})
			t.Logf("%d crash points", len(points))
			o.started = nil
			for i, cp := range points {
				checkRecovery(t, o, cp, i%8 == 3)
			}
		})
	}
}

// stoppedRun runs the job until at least three checkpoints are complete
// and returns what a crash then leaves, with the newest complete one.
func stoppedRun(t *testing.T) (o *sumJob, crashed *vfs.MemFS, newest int64) {
	t.Helper()
	return stoppedRunConfigured(t, nil)
}

// stoppedRunOn is stoppedRun with the state on backend.
func stoppedRunOn(t *testing.T, backend string) (o *sumJob, crashed *vfs.MemFS, newest int64) {
	t.Helper()
	return stoppedRunWith(t, backend, nil)
}

// stoppedRunConfigured is stoppedRun of the job with its settings changed
// by configure.
func stoppedRunConfigured(t *testing.T, configure func(*config.Config)) (o *sumJob, crashed *vfs.MemFS, newest int64) {
	t.Helper()
	return stoppedRunWith(t, "memory", configure)
}

// stoppedRunWith is stoppedRun of the job with its state on backend and
// its settings changed by configure.
func stoppedRunWith(t *testing.T, backend string, configure func(*config.Config), prepare ...func(*sumJob)) (o *sumJob, crashed *vfs.MemFS, newest int64) {
	t.Helper()
	mem := vfs.NewMem()
	o = defaultSumJob(2, mem)
	o.configure, o.backend = configure, backend
	for _, p := range prepare {
		p(o)
	}
	o.pauses = []uint64{40, 120, 200, 280}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.ctx = ctx
	var once sync.Once
	o.hook = func(c *sumSource, i uint64) {
		if i >= o.pauses[3] {
			// Three checkpoints are over: a fourth is asked for.
			once.Do(func() {
				crashed = mem.CrashClone()
				cancel()
			})
		}
	}
	if r := o.run(t); !stopped(r.err) || crashed == nil {
		t.Fatalf("Run = %v, want it stopped", r.err)
	}
	ms := checkpoints(t, crashed)
	for id, m := range ms {
		if m != nil {
			newest = max(newest, id)
		}
	}
	for id := int64(1); id <= newest; id++ {
		if ms[id] == nil {
			t.Fatalf("checkpoint %d is not complete: %v", id, ms)
		}
	}
	if newest < 3 {
		t.Fatalf("checkpoints %v, want at least 3 complete", ms)
	}
	o.ctx, o.hook, o.fs = nil, nil, nil
	return o, crashed, newest
}

// committedBy returns the names of the sink files that checkpoints up to
// id commit: for every subtask, its files numbered below the next number
// of checkpoint id.
func committedBy(t *testing.T, fsys vfs.FS, id int64) []string {
	t.Helper()
	m, err := (&storage.Storage{FS: fsys, Dir: sumCkptDir}).ReadManifest(id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range m.Node("out").Sinks {
		for seq := range s.NextSeq {
			names = append(names, fmt.Sprintf("part-%05d-%010d", s.Subtask, seq))
		}
	}
	slices.Sort(names)
	return names
}

func damage(t *testing.T, fsys *vfs.MemFS, id int64, how string) {
	t.Helper()
	dir := filepath.Join(sumCkptDir, storage.FolderName(id))
	manifest := filepath.Join(dir, "MANIFEST")
	// The state file is the one that checkpoint id wrote for subtask 1 of
	// "sum": the last of that subtask's files, a delta on top of those of
	// earlier checkpoints, which only this checkpoint names.
	state := ""
	if m, err := (&storage.Storage{FS: fsys, Dir: sumCkptDir}).ReadManifest(id); err == nil {
		l := &storage.Loaded{Dir: dir}
		for _, f := range m.Node("sum").Files {
			if f.Subtask == 1 {
				state = l.Path(f)
			}
		}
	}
	if state == "" && strings.Contains(how, "state") {
		t.Fatalf("checkpoint %d has no state file of sum[1]", id)
	}
	switch how {
	case "flip a state byte":
		rewriteFile(t, fsys, state, func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b })
	case "flip a state checksum byte":
		rewriteFile(t, fsys, state, func(b []byte) []byte { b[len(b)-1] ^= 0x01; return b })
	case "truncate state":
		rewriteFile(t, fsys, state, func(b []byte) []byte { return b[:len(b)-3] })
	case "extend state":
		rewriteFile(t, fsys, state, func(b []byte) []byte { return append(b, 0) })
	case "empty state":
		rewriteFile(t, fsys, state, func(b []byte) []byte { return nil })
	case "remove state":
		if err := fsys.Remove(state); err != nil {
			t.Fatal(err)
		}
	case "flip a manifest byte":
		rewriteFile(t, fsys, manifest, func(b []byte) []byte { b[len(b)/3] ^= 0x02; return b })
	case "truncate manifest":
		rewriteFile(t, fsys, manifest, func(b []byte) []byte { return b[:len(b)/2] })
	case "remove manifest":
		if err := fsys.Remove(manifest); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no damage %q", how)
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		t.Fatal(err)
	}
	if state != "" {
		if err := vfs.SyncDir(fsys, filepath.Dir(state)); err != nil {
			t.Fatal(err)
		}
	}
}

var damages = []string{"flip a state byte", "flip a state checksum byte", "truncate state", "extend state", "empty state", "remove state", "flip a manifest byte", "truncate manifest", "remove manifest"}

// TestRestoreSkipsDamaged damages the newest checkpoint: a restart skips
// it with a warning, resumes from the one before, removes the output that
// only the damaged one committed, and writes the output exactly once.
func TestRestoreSkipsDamaged(t *testing.T) {
	o, base, newest := stoppedRun(t)
	prev := newest - 1
	later := committedBy(t, base, newest)
	earlier := committedBy(t, base, prev)
	for _, how := range damages {
		t.Run(how, func(t *testing.T) {
			fsys := base.CrashClone()
			damage(t, fsys, newest, how)
			warning := fmt.Sprintf("checkpoint %d is damaged, skipping it: ", newest)
			if how == "remove manifest" {
				warning = fmt.Sprintf("checkpoint %d is incomplete (no manifest): skipping it", newest)
			}

			// What the restart finds and removes, before it runs.
			restartFS := fsys.CrashClone()
			log := new(syncBuffer)
			j := job.New(context.Background(), o.config(t), job.Options{Log: log, FS: restartFS})
			cp := j.Checkpointer()
			if err := cp.Recover("", false, false); err != nil {
				t.Fatal(err)
			}
			if got := cp.Restored().Manifest.ID; got != prev {
				t.Errorf("resumes from checkpoint %d, want %d", got, prev)
			}
			if !strings.Contains(log.String(), warning) {
				t.Errorf("no warning %q in the log:\n%s", warning, log)
			}
			// The files that only the damaged checkpoint committed are
			// gone.
			if n := len(later) - len(earlier); n > 0 && !strings.Contains(log.String(), fmt.Sprintf("sinks.out: removed %d part files that no checkpoint commits", n)) {
				t.Errorf("the log does not tell the removal of %d files:\n%s", n, log)
			}
			if got := slices.Sorted(maps.Keys(outputFiles(t, restartFS))); !slices.Equal(got, earlier) {
				t.Errorf("after Recover the output is %v, want the files of checkpoint %d: %v", got, prev, earlier)
			}
			if h := hiddenFiles(restartFS); len(h) > 0 {
				t.Errorf("hidden files left: %v", h)
			}
			if got := cp.NextID(); got <= newest {
				t.Errorf("the next checkpoint is %d, want one after every folder (> %d)", got, newest)
			}

			// The run.
			o.fs = fsys
			r := o.mustRun(t)
			if r.restoredID() != prev {
				t.Errorf("resumed from checkpoint %d, want %d", r.restoredID(), prev)
			}
			o.checkOutput(t, fsys)
		})
	}
}

// TestRestoreSkipsDamagedAfterEnd damages the final checkpoint of a run
// that ended, or removes it and damages the one before: a restart resumes
// from the newest intact one and the output is exactly once.
func TestRestoreSkipsDamagedAfterEnd(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.mustRun(t)
	var complete []int64
	for id, m := range checkpoints(t, mem) {
		if m != nil {
			complete = append(complete, id)
		}
	}
	slices.Sort(complete)
	n := len(complete)
	if n < 3 {
		t.Fatalf("checkpoints %v, want at least 3", complete)
	}
	final, prev, prev2 := complete[n-1], complete[n-2], complete[n-3]
	cases := []struct {
		name   string
		damage func(fsys *vfs.MemFS)
		want   int64
	}{
		{"final manifest flipped", func(fsys *vfs.MemFS) { damage(t, fsys, final, "flip a manifest byte") }, prev},
		{"final removed, state before flipped", func(fsys *vfs.MemFS) {
			damage(t, fsys, final, "remove manifest")
			damage(t, fsys, prev, "flip a state byte")
		}, prev2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := mem.CrashClone()
			c.damage(fsys)
			o.fs = fsys
			r := o.mustRun(t)
			if r.restoredID() != c.want {
				t.Errorf("resumed from checkpoint %d, want %d\n%s", r.restoredID(), c.want, r.log)
			}
			if !strings.Contains(r.log.String(), "removed") {
				t.Errorf("no output removed:\n%s", r.log)
			}
			o.checkOutput(t, fsys)
			if h := hiddenFiles(fsys); len(h) > 0 {
				t.Errorf("hidden files left: %v", h)
			}
		})
	}
}

// TestResumeFromCheckpointFolder resumes a job that ran to its end from
// an older checkpoint named by its folder (--from-checkpoint): the output
// after it is written again, exactly once.
func TestResumeFromCheckpointFolder(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.mustRun(t)
	o.from = filepath.Join(sumCkptDir, storage.FolderName(2))
	var ev bytes.Buffer
	o.events = events.NewWriter(&ev, "sum")
	r := o.mustRun(t)
	// The events say where the run resumed from and which checkpoints
	// completed, the last one final.
	got, err := events.Read(&ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got[0].Kind != events.Resume || got[0].Checkpoint != 2 || got[0].Path != o.from {
		t.Fatalf("first event %+v, want a resume from checkpoint 2 in %s", got, o.from)
	}
	last := got[len(got)-1]
	if last.Kind != events.Checkpoint || !last.Final {
		t.Errorf("last event %+v, want the final checkpoint", last)
	}
	for _, e := range got[1:] {
		if e.Kind != events.Checkpoint || e.Checkpoint <= 2 {
			t.Errorf("event %+v, want only checkpoints after 2", e)
		}
	}
	if r.restoredID() != 2 || !strings.Contains(r.log.String(), "resuming from checkpoint 2 ("+o.from+")") {
		t.Errorf("resumed from checkpoint %d, want 2:\n%s", r.restoredID(), r.log)
	}
	if !strings.Contains(r.log.String(), "part files that no checkpoint commits") {
		t.Errorf("no output removed:\n%s", r.log)
	}
	o.checkOutput(t, mem)
	if h := hiddenFiles(mem); len(h) > 0 {
		t.Errorf("hidden files left: %v", h)
	}
}

// TestRescaleRecovery resumes a job stopped after some checkpoints with
// another parallelism of its keyed operator and sink: the key groups move
// to other subtasks, and the output is exactly once.
func TestRescaleRecovery(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testRescaleRecovery(t, backend) })
	}
}

func testRescaleRecovery(t *testing.T, backend string) {
	o, base, newest := stoppedRunOn(t, backend)
	for _, p := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			fsys := base.CrashClone()
			o2 := *o
			o2.fs, o2.sumP = fsys, p
			r := o2.mustRun(t)
			if r.restoredID() != newest {
				t.Errorf("resumed from checkpoint %d, want %d", r.restoredID(), newest)
			}
			o2.checkOutput(t, fsys)
			if h := hiddenFiles(fsys); len(h) > 0 {
				t.Errorf("hidden files left: %v", h)
			}
		})
	}
}

// TestMapStateRescale: the sum job with a map state, stopped after three
// checkpoints and resumed at parallelism 1, 3 and 4 on both backends: each
// key's map, restored from the key groups its subtask owns now, agrees
// with its count at the end. With a state-ttl (longer than the runs) the
// entries carry their write times through the same.
func TestMapStateRescale(t *testing.T) {
	for _, ttl := range []int64{0, 3_600_000} {
		for _, backend := range backends {
			t.Run(fmt.Sprintf("%s/ttl=%d", backend, ttl), func(t *testing.T) { testMapStateRescale(t, backend, ttl) })
		}
	}
}

func testMapStateRescale(t *testing.T, backend string, ttl int64) {
	o, base, newest := stoppedRunWith(t, backend, nil, func(o *sumJob) { o.mapCheck, o.mapTTL = t.Errorf, ttl })
	for _, p := range []int{1, 3, 4} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			fsys := base.CrashClone()
			o2 := *o
			o2.fs, o2.sumP, o2.mapCheck = fsys, p, t.Errorf
			if r := o2.mustRun(t); r.restoredID() != newest {
				t.Errorf("resumed from checkpoint %d, want %d", r.restoredID(), newest)
			}
			o2.checkOutput(t, fsys)
		})
	}
}

// stopAt runs o on fsys (a MemFS) until source subtask 0 reaches record
// index at, and returns what a crash then leaves.
func stopAt(t *testing.T, o *sumJob, fsys *vfs.MemFS, at uint64) (*vfs.MemFS, *sumRun) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o2 := *o
	o2.fs, o2.ctx = fsys, ctx
	var (
		once    sync.Once
		crashed *vfs.MemFS
	)
	o2.hook = func(c *sumSource, i uint64) {
		if c.sub == 0 && i >= at {
			once.Do(func() {
				crashed = fsys.CrashClone()
				cancel()
			})
		}
	}
	r := o2.run(t)
	if !stopped(r.err) || crashed == nil {
		t.Fatalf("Run = %v, want it stopped at record %d\n%s", r.err, at, r.log)
	}
	return crashed, r
}

// TestRescaleDownUp takes the keyed operator and its sink from 3 subtasks
// to 2 and back to 3. Subtask 2 comes back after subtask 1 wrote fewer
// files than it had: it must not number its files after subtask 1's and
// overwrite the ones it committed before.
func TestRescaleDownUp(t *testing.T) {
	// Every key is owned by subtask 2 of 3 (and 1 of 2).
	var keys []int64
	for k := int64(0); len(keys) < 5; k++ {
		if keygroup.Owner(keygroup.Of(HashInt64(k), 128), 128, 3) == 2 {
			keys = append(keys, k)
		}
	}
	o := defaultSumJob(1, nil)
	o.keyFn = func(seq uint64) int64 { return keys[seq%uint64(len(keys))] }
	o.pauses = []uint64{100, 200, 300, 400, 500, 600, 700, 800}

	o.sumP = 3
	fsys, _ := stopAt(t, o, vfs.NewMem(), 750)
	o.sumP = 2
	fsys, r := stopAt(t, o, fsys, 810)
	if r.restoredID() < 5 {
		t.Fatalf("the second run resumed from checkpoint %d, want one after several files", r.restoredID())
	}
	o.sumP = 3
	o.fs = fsys
	o.mustRun(t)
	o.checkOutput(t, fsys)
}

// TestRetain runs the job with retain 2: the two newest checkpoints are
// left, both complete.
func TestRetain(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.retain = 2
	o.mustRun(t)
	ms := checkpoints(t, mem)
	var ids []int64
	for id, m := range ms {
		if m == nil {
			t.Errorf("checkpoint %d is left incomplete", id)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) != 2 || !ms[ids[1]].Final || ms[ids[0]].Final || ids[1] < 4 {
		t.Errorf("checkpoints %v left, want the last periodic one and the final one", ids)
	}
	o.checkOutput(t, mem)
}

// TestResumeRemovesFilesOfUnknownSubtasks resumes, at sink parallelism
// 2, from a checkpoint taken at 2, after a run at 4 that resumed from it
// has committed files of subtasks 2 and 3 (as when the newer checkpoints
// are damaged, or with --from-checkpoint): the older checkpoint knows no
// subtask 3, so no checkpoint it continues commits those files, and they
// must go.
func TestResumeRemovesFilesOfUnknownSubtasks(t *testing.T) {
	o, base, newest := stoppedRun(t)
	wider := *o
	wider.sumP = 4
	wider.pauses = []uint64{40, 120, 200, 280, 320, 360}
	fsys, _ := stopAt(t, &wider, base.CrashClone(), 400)
	var high []string
	for name := range outputFiles(t, fsys) {
		if sub, _, _ := strings.Cut(strings.TrimPrefix(name, "part-"), "-"); sub == "00002" || sub == "00003" {
			high = append(high, name)
		}
	}
	if len(high) == 0 {
		t.Fatalf("the run at parallelism 4 committed no file of subtask 2 or 3: %v", slices.Sorted(maps.Keys(outputFiles(t, fsys))))
	}
	o.fs = fsys
	o.from = filepath.Join(sumCkptDir, storage.FolderName(newest))
	o.mustRun(t)
	o.checkOutput(t, fsys)
	for _, name := range high {
		if _, ok := outputFiles(t, fsys)[name]; ok {
			t.Errorf("%s, committed by no checkpoint the run continues, is left", name)
		}
	}
}

// TestSecondInstanceRefused runs a second instance of the job while the
// first one runs: on the same checkpoint directory, then on another one
// but the same sink directory. The second fails at once with a message
// that names the directory, and the first one's output is exact.
func TestSecondInstanceRefused(t *testing.T) {
	for _, tc := range []struct {
		name, ckptDir, want string
	}{
		{"same checkpoint directory", sumCkptDir, "checkpoint directory " + sumCkptDir + " is in use by another instance of this job"},
		{"same sink directory", "/other-ckpt", "sinks.out: output directory " + sumOutDir + " is in use by another instance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			first := defaultSumJob(2, mem)
			running, finish := make(chan struct{}), make(chan struct{})
			var once sync.Once
			first.hook = func(c *sumSource, i uint64) {
				if i == 100 {
					once.Do(func() { close(running) })
					<-finish
				}
			}
			done := make(chan *sumRun, 1)
			go func() { done <- first.run(t) }()
			<-running

			second := defaultSumJob(2, mem)
			second.ckptDir = tc.ckptDir
			r := second.run(t)
			var fatal *fault.Fatal
			if !errors.As(r.err, &fatal) || !strings.Contains(r.err.Error(), tc.want) {
				t.Errorf("second instance: %v, want a fatal error with %q", r.err, tc.want)
			}
			close(finish)
			if r := <-done; r.err != nil {
				t.Fatalf("first instance: %v\n%s", r.err, r.log)
			}
			first.checkOutput(t, mem)
		})
	}
}

// TestUnwritableCheckpointDirFailsAtStart: a checkpoint directory that
// cannot be written to is found before any record is read, and is fatal
// (a restart would not mend it).
func TestUnwritableCheckpointDirFailsAtStart(t *testing.T) {
	mem := vfs.NewMem()
	readOnly := errors.New("read-only file system")
	o := defaultSumJob(2, vfs.NewErrorFS(mem, vfs.Always(vfs.OpCreate, sumCkptDir+"/", readOnly)))
	r := o.run(t)
	var fatal *fault.Fatal
	if !errors.As(r.err, &fatal) || !errors.Is(r.err, readOnly) || !strings.Contains(r.err.Error(), "checkpoint directory "+sumCkptDir+" cannot be written to") {
		t.Fatalf("Run = %v, want a fatal error saying the checkpoint directory cannot be written to", r.err)
	}
	if n := r.j.RecordsRead(); n != 0 {
		t.Errorf("%d records read before the failure, want none", n)
	}
}

// TestEmptyCheckpointDirRefused: checkpoint.dir ” is refused at start.
func TestEmptyCheckpointDirRefused(t *testing.T) {
	o := defaultSumJob(2, vfs.NewMem())
	cfg := o.config(t)
	cfg.Checkpoint.Dir = ""
	j := job.New(context.Background(), cfg, job.Options{Log: io.Discard, FS: o.fs})
	err := j.Run(o.build)
	if err == nil || !strings.Contains(err.Error(), "checkpoint.dir is empty") {
		t.Fatalf("Run = %v, want checkpoint.dir is empty", err)
	}
}

// TestStopAtCheckpoint stops the job in the middle of its input, as a
// signal does: Run returns the checkpoint it stopped at, complete and
// committed, and a new run resumes from it to an exact output.
func TestStopAtCheckpoint(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.interval = time.Hour // only the stop takes a checkpoint
	o.pauses, o.holdPolls = nil, 0
	o.n = 200_000 // the stop is over long before the input
	var running atomic.Pointer[job.Job]
	o.started = func(j *job.Job) { running.Store(j) }
	var once sync.Once
	o.hook = func(c *sumSource, i uint64) {
		if i == 200 {
			once.Do(func() { running.Load().Stop() })
		}
	}
	r := o.run(t)
	var stopped *job.Stopped
	if !errors.As(r.err, &stopped) {
		t.Fatalf("Run = %v, want a stop at a checkpoint\n%s", r.err, r.log)
	}
	m := checkpoints(t, mem)[stopped.Checkpoint]
	if m == nil || m.Final {
		t.Fatalf("checkpoint %d, which the job stopped at, is %+v: want it complete and not final", stopped.Checkpoint, m)
	}
	o.hook, o.started = nil, nil
	r = o.mustRun(t)
	if r.restoredID() != stopped.Checkpoint {
		t.Errorf("resumed from checkpoint %d, want %d", r.restoredID(), stopped.Checkpoint)
	}
	o.checkOutput(t, mem)
	if h := hiddenFiles(mem); len(h) > 0 {
		t.Errorf("hidden files left: %v", h)
	}
}

// TestCheckpointOfAnotherJobRefused: a job started on the checkpoint
// directory of another one refuses to resume from its checkpoints, saying
// what to do, and touches nothing.
func TestCheckpointOfAnotherJobRefused(t *testing.T) {
	o, crashed, _ := stoppedRun(t)
	before := outputFiles(t, crashed)
	other := *o
	other.fs, other.ctx, other.hook = crashed, nil, nil
	other.configure = func(c *config.Config) { c.Name = "other" }
	r := other.run(t)
	var fatal *fault.Fatal
	want := "it is a checkpoint of job sum, not of other: two jobs share the checkpoint directory /ckpt"
	if !errors.As(r.err, &fatal) || !strings.Contains(r.err.Error(), want) || !strings.Contains(r.err.Error(), "run --fresh") {
		t.Fatalf("Run = %v, want a fatal error with %q and run --fresh", r.err, want)
	}
	if after := outputFiles(t, crashed); !maps.EqualFunc(before, after, bytes.Equal) {
		t.Errorf("the refused run changed the committed output")
	}
}

// TestChangedStateTypeRefused: the same job with the type of its state
// changed (an int64 count that became uint64; a key that became a
// string) refuses to resume, naming the node and the types, before any
// state is decoded; a field added at the end resumes.
func TestChangedStateTypeRefused(t *testing.T) {
	const acc = "example.com/sum.Acc{1 Count int64}"
	cases := []struct {
		name, key, value, want string
	}{
		{"int64 to uint64", "int64", "example.com/sum.Acc{1 Count uint64}", `the state of "sum" (uid sum) in checkpoint 3 cannot be read by this version: sum.Acc.Count was int64 in the checkpoint and is uint64 now`},
		{"key type", "string", acc, `the key of "sum" (uid sum) was int64 in checkpoint 3 and is string now`},
		{"field added", "int64", "example.com/sum.Acc{1 Count int64; 2 Last string}", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, base, newest := stoppedRunConfigured(t, func(c *config.Config) {
				c.Fingerprint, c.Nodes[sumSum].KeySchema, c.Nodes[sumSum].ValueSchema = "v1", "int64", acc
			})
			if newest != 3 {
				t.Fatalf("stopped after checkpoint %d, want 3", newest)
			}
			next := *o
			next.fs, next.ctx, next.hook = base.CrashClone(), nil, nil
			next.configure = func(c *config.Config) {
				c.Fingerprint, c.Nodes[sumSum].KeySchema, c.Nodes[sumSum].ValueSchema = "v2", tc.key, tc.value
			}
			r := next.run(t)
			if tc.want == "" {
				if r.err != nil {
					t.Fatalf("Run = %v, want it to resume", r.err)
				}
				if !strings.Contains(r.log.String(), "the job changed since checkpoint 3") {
					t.Errorf("the log does not say the job changed:\n%s", r.log)
				}
				return
			}
			var fatal *fault.Fatal
			if !errors.As(r.err, &fatal) || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("Run = %v, want a fatal error with %q", r.err, tc.want)
			}
		})
	}
}

// TestFresh reruns a finished job: without --fresh it says it is done;
// with it, the old checkpoints and output are moved aside, not deleted,
// and the job runs again from the beginning to an exact output. A job
// refused another job's checkpoint starts over the same way.
func TestFresh(t *testing.T) {
	mem := vfs.NewMem()
	o := defaultSumJob(2, mem)
	o.mustRun(t)
	first := outputFiles(t, mem)
	r := o.mustRun(t)
	if !strings.Contains(r.log.String(), "is final: the job ran to the end of its input already") || !strings.Contains(r.log.String(), "run --fresh") {
		t.Fatalf("a rerun of a finished job does not say so:\n%s", r.log)
	}
	o.fresh = true
	r = o.mustRun(t)
	if r.restoredID() != 0 || !strings.Contains(r.log.String(), "checkpoints aside to "+sumCkptDir+"/aside-") {
		t.Fatalf("--fresh resumed from checkpoint %d, log:\n%s", r.restoredID(), r.log)
	}
	o.checkOutput(t, mem)
	entries, _ := mem.ReadDir(sumCkptDir)
	var aside string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "aside-") {
			aside = filepath.Join(sumCkptDir, e.Name())
		}
	}
	old, err := (&storage.Storage{FS: mem, Dir: aside}).List()
	if err != nil || len(old) == 0 || !old[len(old)-1].Complete {
		t.Errorf("the old checkpoints in %q: %v, %v", aside, old, err)
	}
	outEntries, _ := mem.ReadDir(sumOutDir)
	moved := 0
	for _, e := range outEntries {
		if strings.HasPrefix(e.Name(), ".aside-") {
			files, _ := mem.ReadDir(filepath.Join(sumOutDir, e.Name()))
			moved += len(files)
		}
	}
	if moved != len(first) {
		t.Errorf("%d files of the first run's output moved aside, want %d", moved, len(first))
	}
	if strings.Contains(r.log.String(), "earlier run") {
		t.Errorf("the first --fresh speaks of earlier runs aside:\n%s", r.log)
	}
	// Started over once more: the line says what earlier runs left aside,
	// which nothing deletes.
	r = o.mustRun(t)
	o.checkOutput(t, mem)
	for _, want := range []string{
		"; 1 earlier run's checkpoints are aside in " + sumCkptDir + " too (aside-*): remove the folders you no longer need",
		"; 1 earlier run's files are aside in ",
	} {
		if !strings.Contains(r.log.String(), want) {
			t.Errorf("a second --fresh does not say %q:\n%s", want, r.log)
		}
	}

	// Another job's checkpoints: refused, then started over with --fresh.
	other := defaultSumJob(2, mem)
	other.configure = func(c *config.Config) { c.Name = "other" }
	if r := other.run(t); r.err == nil || !strings.Contains(r.err.Error(), "not of other") {
		t.Fatalf("another job's checkpoint: %v", r.err)
	}
	other.fresh = true
	other.mustRun(t)
	other.checkOutput(t, mem)
}
