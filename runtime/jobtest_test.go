package runtime

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"maps"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/internal/syncbuf"
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// syncBuffer is a log that goroutines of a job may write while a test
// reads it.
type syncBuffer = syncbuf.Buffer

// This file builds a small job by hand, the way generated code does, for
// the checkpoint and recovery tests: a generator source "gen" sends int64
// keys, hashed by key, to the aggregate "sum", which keeps a count per key
// in memory state and writes "key,count" for every record to the file sink
// "out", fused with it. A run that processes every record exactly once
// writes, for every key k seen n times, the lines "k,1" ... "k,n", each
// exactly once: a lost or replayed record shows as a missing or duplicate
// line.

// The nodes of the sum job.
const (
	sumGen = 0
	sumSum = 1
	sumOut = 2
)

// Where the sum job writes, on a MemFS, in the folder sumJob.dir.
const (
	sumCkptDir = "/ckpt"
	sumOutDir  = "/out"
)

// jobHangGuard is how long a job of a test may run before it is called a
// hang; it is never what a test asserts.
const jobHangGuard = 20 * time.Second

// sumJob describes one run of the sum job.
type sumJob struct {
	p    int    // subtasks of every node
	sumP int    // subtasks of "sum" and "out", when not p
	n    uint64 // records, sequence numbers 0..n-1
	keys uint64 // distinct keys
	// keyFn, if set, gives the key of a sequence number instead.
	keyFn    func(seq uint64) int64
	interval time.Duration
	minPause time.Duration
	retain   int
	fs       vfs.FS
	// ctx stops the job when cancelled (nil: never).
	ctx context.Context
	// pauses are record indexes (per source subtask, counting from 0) at
	// which a source subtask waits until the coordinator has triggered a
	// new checkpoint, so that every pause point is separated from the
	// next by a barrier: a run takes at least len(pauses) checkpoints
	// before its final one, however fast the machine.
	pauses []uint64
	// hook, if set, runs in the source function before record index i of
	// source subtask c, after the pause (if any) at i.
	hook func(c *sumSource, i uint64)
	// holdPolls, unlike generated code, makes source subtasks poll their
	// control block (for barriers and linger flushes) only from record
	// index holdPolls on: a barrier asked for earlier is injected there,
	// and no record leaves the source before it.
	holdPolls uint64
	// started, if set, is called with the job before it runs.
	started func(j *Job)
	// from is the checkpoint folder to resume from (--from-checkpoint).
	from string
	// events, if set, receives the run's events.
	events *events.Writer
	// dir is the job's folder, which holds its checkpoint directory and
	// its sink's directory ("": the root).
	dir string
	// ckptDir is the checkpoint directory; "" for sumCkptDir in dir.
	ckptDir string
	// configure, if set, changes the settings before they are resolved.
	configure func(*config.Config)
	// fresh starts the run over (run --fresh).
	fresh bool
	// fromSavepoint makes from a savepoint (--from-savepoint).
	fromSavepoint bool
	// allowNonRestored is run --allow-non-restored-state.
	allowNonRestored bool
	// backend is where "sum" keeps its state: memory (also "") or
	// pebble.
	backend string
	// mapCheck, if set, gives "sum" a map state too (its state "map.M"):
	// per key, how many of its counts so far were n%5 for each n%5. At the
	// end of the input the subtasks check it against the counts, and
	// report a difference to mapCheck.
	mapCheck func(format string, args ...any)
	// mapTTL, with mapCheck, is the map state's state-ttl (ms; 0: none).
	mapTTL int64
}

// sumMap is the map state of "sum", on either backend.
type sumMap interface {
	Bind(k int64)
	Get(uk int64) (int64, bool)
	Put(uk, v int64)
	Len() int
	All() iter.Seq2[int64, int64]
}

// mapCodec writes the entries of the map state of "sum", with the
// job's mapTTL.
func (o *sumJob) mapCodec() *state.Codec[state.MapKey[int64, int64], int64] {
	return state.MapCodec(HashInt64, sumCodec.EncodeKey, sumCodec.DecodeKey, state.IntKeys[int64](),
		sumCodec.EncodeValue, sumCodec.DecodeValue, "int64", "int64").WithTTL(o.mapTTL)
}

// backends are the state backends the tests run the sum job on.
var backends = []string{"memory", "pebble"}

// checkpointDir is the job's checkpoint directory.
func (o *sumJob) checkpointDir() string {
	return cmp.Or(o.ckptDir, filepath.Join("/", o.dir, sumCkptDir))
}

// outDir is the directory of the job's file sink.
func (o *sumJob) outDir() string { return filepath.Join("/", o.dir, sumOutDir) }

// defaultSumJob is a job of p subtasks that takes at least three
// checkpoints before the final one. Checkpoint 1 comes after record 40 of
// every source subtask, however early the coordinator asks for it, so
// that it has sink files, and checkpoint 2 is over before any source
// subtask ends.
func defaultSumJob(p int, fsys vfs.FS) *sumJob {
	return &sumJob{p: p, n: 900, keys: 13, interval: time.Millisecond, retain: 10, fs: fsys,
		pauses: []uint64{40, 120, 200}, holdPolls: 40}
}

// sumKey is the key of the record with sequence number seq.
func (o *sumJob) sumKey(seq uint64) int64 {
	if o.keyFn != nil {
		return o.keyFn(seq)
	}
	return int64(seq * 7 % o.keys)
}

// config returns the job's settings, resolved.
func (o *sumJob) config(t testing.TB) *Config {
	t.Helper()
	cfg := &config.Config{
		Name:           "sum",
		Parallelism:    o.p,
		MaxParallelism: 128,
		Checkpoint: config.CheckpointConfig{
			Mode:     config.ExactlyOnce,
			Interval: o.interval,
			Timeout:  time.Minute,
			MinPause: o.minPause,
			Retain:   o.retain,
			Dir:      o.checkpointDir(),
		},
		StateBackend: cmp.Or(o.backend, "memory"),
		Nodes: []config.NodeConfig{
			{Name: "gen", UID: "gen", Kind: "source", Section: "sources", Connector: "generator", Options: map[string]string{"generate": "Gen"}},
			{Name: "sum", UID: "sum", Kind: "aggregate", Section: "operators", Parallelism: o.sumP, ParallelismSet: o.sumP != 0},
			{Name: "out", UID: "out", Kind: "sink", Section: "sinks", FusedWith: "sum", Connector: "file", Options: map[string]string{"path": o.outDir()}},
		},
	}
	if o.configure != nil {
		o.configure(cfg)
	}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// sumRun is a finished run of the sum job.
type sumRun struct {
	j   *Job
	err error
	log *syncBuffer
}

// run runs the job to its end (or until o.ctx is cancelled) and returns
// what Run returned; it fails the test if the job hangs.
func (o *sumJob) run(t testing.TB) *sumRun {
	t.Helper()
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	log := new(syncBuffer)
	j := job.New(ctx, o.config(t), job.Options{Log: log, FS: o.fs, From: o.from, Events: o.events, Fresh: o.fresh, AllowNonRestoredState: o.allowNonRestored, FromSavepoint: o.fromSavepoint})
	r := &sumRun{j: j, log: log}
	if o.started != nil {
		o.started(j)
	}
	done := make(chan error, 1)
	go func() { done <- j.Run(o.build) }()
	select {
	case r.err = <-done:
	case <-time.After(jobHangGuard):
		t.Fatalf("hang: the job still runs after %v\nlog:\n%s\n%s", jobHangGuard, r.log, stacks())
	}
	return r
}

// mustRun runs the job and fails the test unless it succeeds.
func (o *sumJob) mustRun(t testing.TB) *sumRun {
	t.Helper()
	r := o.run(t)
	if r.err != nil {
		t.Fatalf("Run: %v\nlog:\n%s", r.err, r.log)
	}
	return r
}

// restoredID is the checkpoint the run resumed from, 0 for none.
func (r *sumRun) restoredID() int64 {
	l := r.j.Checkpointer().Restored()
	if l == nil {
		return 0
	}
	return l.Manifest.ID
}

func (o *sumJob) build(j *Job) {
	ins := NewInboxes[int64](j, j.Parallelism(sumSum), j.Parallelism(sumGen))
	for i := range j.Parallelism(sumGen) {
		j.Go("gen", i, newSumSource(j, o, i, NewOut(j, ins, i)).run)
	}
	for i := range j.Parallelism(sumSum) {
		j.Go("sum", i, newSumChain(j, o, i, ins[i]).run)
	}
}

// sumSource is one subtask of source "gen".
type sumSource struct {
	j     *Job
	o     *sumJob
	sub   int
	task  *Task
	src   *GeneratorSource[int64]
	ctl   *SourceCtl
	toSum *Out[int64]
	// nextPause indexes o.pauses.
	nextPause int
	// savepointBarrier is the savepoint's barrier once the subtask has
	// injected it, and savepointDone is set once the subtask has waited
	// for its checkpoint (savepointRun).
	savepointBarrier int64
	savepointDone    bool
}

func newSumSource(j *Job, o *sumJob, sub int, toSum *Out[int64]) *sumSource {
	c := &sumSource{j: j, o: o, sub: sub, task: j.Task(sumGen, sub), toSum: toSum}
	c.src = NewGeneratorSource(j, sumGen, sub, c.generate)
	c.ctl = c.src.Ctl()
	return c
}

// generate is the generator's function.
func (c *sumSource) generate(seq uint64) (int64, bool) {
	if seq >= c.o.n {
		return 0, false
	}
	i := c.src.Index(seq)
	if c.nextPause < len(c.o.pauses) && i >= c.o.pauses[c.nextPause] {
		// After a restore, pause points already passed count as one.
		for c.nextPause < len(c.o.pauses) && i >= c.o.pauses[c.nextPause] {
			c.nextPause++
		}
		c.awaitBarrier()
	}
	if c.o.hook != nil {
		c.o.hook(c, i)
	}
	return c.o.sumKey(seq), true
}

// awaitUntil blocks the source subtask until cond holds; the deadline only
// guards against a hang.
func (c *sumSource) awaitUntil(what string, cond func() bool) {
	deadline := time.Now().Add(jobHangGuard)
	for !cond() {
		select {
		case <-c.j.Context().Done():
			fault.Abort(fault.ErrCanceled)
		default:
		}
		if time.Now().After(deadline) {
			fault.Abortf("test hang: source waited %v for %s", jobHangGuard, what)
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// awaitBarrier waits until the coordinator has asked for a barrier that
// this subtask has not injected yet: the checkpoint before it is over.
// (A negative value asks for a linger flush.)
func (c *sumSource) awaitBarrier() {
	c.awaitUntil("a checkpoint barrier", c.ctl.BarrierDue)
}

// awaitCommitted waits until checkpoint id (or a later one) is complete
// and its output committed.
func (c *sumSource) awaitCommitted(id int64) {
	c.awaitUntil(fmt.Sprintf("checkpoint %d to complete", id), func() bool { return c.j.Checkpointer().Committed() >= id })
}

func (c *sumSource) run() {
	for {
		if r, ok := c.src.Next(); ok {
			c.toSum.Hash(HashInt64(r), r)
		} else if c.src.Done() && c.ctl.AtEnd() {
			break
		} else {
			c.toSum.Flush()
		}
		if c.o.holdPolls > 0 && c.src.Index(c.src.Seq()) <= c.o.holdPolls && !c.src.Done() {
			continue
		}
		if id := c.ctl.Poll(); id > 0 {
			c.barrier(id)
		} else if id < 0 {
			c.toSum.Flush()
		}
	}
	c.end()
}

func (c *sumSource) barrier(id int64) {
	s := c.task.Begin(id)
	if s.Savepoint() {
		c.savepointBarrier = id
	}
	c.src.Snapshot(s, sumGen)
	c.toSum.Barrier(id)
	c.task.Submit(s)
}

func (c *sumSource) end() {
	s := c.task.Final()
	c.src.Snapshot(s, sumGen)
	c.toSum.End()
	c.task.Submit(s)
}

// sumChain is one subtask of aggregate "sum" and sink "out" fused with it.
type sumChain struct {
	sub   int
	task  *Task
	in    *Inbox[int64]
	state state.Keyed[int64, int64]
	// snapshot adds the state to a snapshot, as the backend does.
	snapshot func(s *Snapshot)
	out      *FileSink[string]
	maps     sumMap
	check    func(format string, args ...any)
}

func newSumChain(j *Job, o *sumJob, sub int, in *Inbox[int64]) *sumChain {
	c := &sumChain{sub: sub, task: j.Task(sumSum, sub), in: in}
	switch o.backend {
	case "", "memory":
		st := state.NewMemory[int64, int64]()
		RestoreMemory(c.task, sumSum, st, sumCodec)
		c.state, c.snapshot = st, func(s *Snapshot) { SnapshotMemory(s, sumSum, st, sumCodec) }
		if o.mapCheck != nil {
			mc := o.mapCodec()
			m := state.NewMemoryMap[int64, int64, int64]()
			RestoreMemoryState(c.task, sumSum, "map.M", m.Store(), mc)
			c.maps, c.snapshot = m, func(s *Snapshot) {
				SnapshotMemory(s, sumSum, st, sumCodec)
				SnapshotMemoryState(s, sumSum, "map.M", m.Store(), mc)
			}
		}
	case "pebble":
		st := pebblestate.Open(c.task, sumSum, sumCodec)
		c.state, c.snapshot = st, func(s *Snapshot) { pebblestate.Snapshot(s, sumSum, st) }
		if o.mapCheck != nil {
			m := pebblestate.OpenMap(c.task, sumSum, "map.M", sumCodec.EncodeKey, o.mapCodec())
			c.maps, c.snapshot = m, func(s *Snapshot) {
				pebblestate.Snapshot(s, sumSum, st)
				pebblestate.Snapshot(s, sumSum, m.Store())
			}
		}
	default:
		panic("no backend " + o.backend)
	}
	c.check = o.mapCheck
	c.out = NewFileSink(j, sumOut, sub, EncodeString)
	return c
}

func (c *sumChain) run() {
	c.in.Bind(c.task, c.out.Flush)
	for {
		m := c.in.Next()
		switch m.Kind {
		case Records:
			for _, r := range m.Recs {
				c.add(r)
			}
			c.in.Recycle(m.Recs)
		case Barrier:
			c.barrier(m.Checkpoint)
			c.in.Release(m.Checkpoint)
		case End:
			c.end()
			return
		}
	}
}

func (c *sumChain) add(k int64) {
	n := c.state.Get(k)
	if n == nil {
		n = new(int64)
		c.state.Put(k, n)
	}
	*n++
	c.out.Write(fmt.Sprintf("%d,%d", k, *n))
	if c.maps != nil {
		c.maps.Bind(k)
		v, _ := c.maps.Get(*n % 5)
		c.maps.Put(*n%5, v+1)
	}
}

func (c *sumChain) barrier(id int64) {
	s := c.task.Begin(id)
	c.snapshot(s)
	c.out.PreCommit(s, sumOut)
	c.task.Submit(s)
}

func (c *sumChain) end() {
	if c.maps != nil {
		// Each key's map counts its counts 1..n by n%5, in order of n%5.
		for k, n := range c.state.All {
			c.maps.Bind(k)
			var got, want []int64
			for uk, v := range c.maps.All() {
				got = append(got, uk, v)
			}
			var counts [5]int64
			for i := int64(1); i <= *n; i++ {
				counts[i%5]++
			}
			for uk, v := range counts {
				if v > 0 {
					want = append(want, int64(uk), v)
				}
			}
			if !slices.Equal(got, want) || c.maps.Len() != len(want)/2 {
				c.check("sum[%d]: key %d counted %d: its map holds %v (Len %d), want %v", c.sub, k, *n, got, c.maps.Len(), want)
			}
		}
	}
	s := c.task.Final()
	c.out.PreCommit(s, sumOut)
	c.out.End()
	c.task.Submit(s)
}

// sumCodec writes the state of "sum" as generated code would.
var sumCodec = &state.Codec[int64, int64]{
	Hash:          HashInt64,
	EncodeKey:     func(w *codec.Writer, k int64) { w.Varint(k) },
	DecodeKey:     func(r *codec.Reader) int64 { return r.Varint() },
	EncodeValue:   func(w *codec.Writer, v *int64) { w.Varint(*v) },
	DecodeValue:   func(r *codec.Reader) *int64 { v := r.Varint(); return &v },
	DecodeValueTo: func(r *codec.Reader, v *int64) { *v = r.Varint() },
	KeySchema:     "int64",
	ValueSchema:   "int64",
}

// wantCounts is the count of every key, computed without the job.
func (o *sumJob) wantCounts() map[int64]int {
	want := map[int64]int{}
	for seq := range o.n {
		want[o.sumKey(seq)]++
	}
	return want
}

// outputFiles returns the committed output: the sink directory's files
// whose names do not start with '.', by name.
func outputFiles(t testing.TB, fsys vfs.FS) map[string][]byte {
	t.Helper()
	return outputFilesIn(t, fsys, sumOutDir)
}

// outputFilesIn is outputFiles of the sink directory dir.
func outputFilesIn(t testing.TB, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := vfs.ReadFile(fsys, filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

// hiddenFiles lists the sink directory's files whose names start with '.'.
func hiddenFiles(fsys vfs.FS) []string { return hiddenFilesIn(fsys, sumOutDir) }

// hiddenFilesIn is hiddenFiles of the sink directory dir.
func hiddenFilesIn(fsys vfs.FS, dir string) []string {
	entries, _ := fsys.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// checkOutput fails the test unless the committed output in fsys is
// exactly what a run without failures writes: every line "k,i" for
// i = 1..count(k), each once.
func (o *sumJob) checkOutput(t testing.TB, fsys vfs.FS) {
	t.Helper()
	got := map[string]int{}
	for _, data := range outputFilesIn(t, fsys, o.outDir()) {
		for line := range strings.Lines(string(data)) {
			got[line]++
		}
	}
	want := map[string]int{}
	for k, n := range o.wantCounts() {
		for i := 1; i <= n; i++ {
			want[fmt.Sprintf("%d,%d\n", k, i)] = 1
		}
	}
	if maps.Equal(got, want) {
		return
	}
	var problems []string
	for _, line := range slices.Sorted(maps.Keys(want)) {
		if got[line] == 0 {
			problems = append(problems, fmt.Sprintf("missing %q", line))
		}
	}
	for _, line := range slices.Sorted(maps.Keys(got)) {
		switch {
		case want[line] == 0:
			problems = append(problems, fmt.Sprintf("unexpected %q ×%d", line, got[line]))
		case got[line] > 1:
			problems = append(problems, fmt.Sprintf("duplicate %q ×%d", line, got[line]))
		}
	}
	if len(problems) > 20 {
		problems = append(problems[:20], fmt.Sprintf("and %d more", len(problems)-20))
	}
	t.Errorf("the committed output is not exactly once (%d lines, want %d):\n%s", len(got), len(want), strings.Join(problems, "\n"))
}

// checkpoints lists the checkpoints in fsys: id -> its manifest, nil for
// a folder without one.
func checkpoints(t testing.TB, fsys vfs.FS) map[int64]*storage.Manifest {
	t.Helper()
	st := &storage.Storage{FS: fsys, Dir: sumCkptDir}
	entries, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]*storage.Manifest{}
	for _, e := range entries {
		out[e.ID] = nil
		if e.Complete {
			m, err := st.ReadManifest(e.ID)
			if err != nil {
				t.Fatalf("checkpoint %d: %v", e.ID, err)
			}
			out[e.ID] = m
		}
	}
	return out
}

// rewriteFile replaces a file of a MemFS with edit's result, durably.
func rewriteFile(t testing.TB, fsys vfs.FS, name string, edit func([]byte) []byte) {
	t.Helper()
	data, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileSync(fsys, name, edit(data)); err != nil {
		t.Fatal(err)
	}
}

var _ io.Writer = (*syncBuffer)(nil)

// stacks returns the stacks of every goroutine, for a hang's message.
func stacks() string {
	buf := make([]byte, 1<<16)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
