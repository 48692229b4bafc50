// Package drive runs a generated job inside a Go test, one step at a time:
// the test pushes records into the sources, moves their watermarks and
// processing time by hand, takes a checkpoint, restores the job from it
// as after a crash, and reads what every sink has emitted and committed.
// `pipegen generate --test` emits the job with a driver Source for every
// source and a driver Sink for every sink, and a typed Driver over this
// one.
//
// No goroutine runs on its own: the job's data plane is driven
// (stream.Manual: every inbox runs its receiver in its sender's
// goroutine), and each source subtask's loop, unchanged, runs as a
// coroutine of the driver: its Next waits for the driver's next command,
// and the driver waits until the source asks again (or its goroutine has
// ended), by which time everything the command caused, down to the sinks,
// has happened. So a test needs no sleep and sees the same output in every
// run. Checkpoints are real (the coordinator, the writers and the state
// backends write them, to an in-memory file system); the driver waits for
// their completion.
//
// Restore ends the running job as a crash would, builds a new one from the
// newest completed checkpoint, and replays every command given since that
// checkpoint: the driver's sources are a replayable log, as a Kafka topic
// is. The sinks are transactional: what a sink wrote is committed when the
// checkpoint after it completes, and a restore drops what no completed
// checkpoint committed, which the replay writes again.
package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/stream"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TB is what the driver needs of a *testing.T (or *testing.B).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Options change how a Driver runs the job.
type Options struct {
	// Parallelism is the number of subtasks of every node (default 1).
	// Above 1, a source's records go to its subtasks in turn, and what a
	// sink emitted is listed subtask by subtask within each checkpoint.
	Parallelism int
	// StateBackend overrides the pipeline's state.backend: "memory" or
	// "pebble".
	StateBackend string
	// Clock is where processing time starts (default: the wall clock when
	// the driver starts, to the millisecond, so that a timer user code
	// sets from time.Now() fires after the time it asks for).
	Clock time.Time
}

// The kinds of the driver's commands.
const (
	cmdRecord = iota
	cmdWatermark
	cmdTick
	// cmdPoll and cmdEnd are not logged: a source polls for a barrier,
	// or reads on to its end.
	cmdPoll
	cmdEnd
)

// command is one step the driver took, as its log keeps it for a replay.
type command struct {
	kind int
	node int
	// seq is the record's index among those of its source: it goes to
	// subtask seq mod parallelism.
	seq uint64
	rec any
	// ts is the record's time from the connector (a Kafka source without
	// an extract function), or the watermark.
	ts int64
	// clock is processing time after the command.
	clock int64
}

// Driver runs one job in a test. Its methods must be called from the
// test's goroutine.
type Driver struct {
	t     TB
	cfg   *config.Config
	build func(*job.Job)
	opts  Options
	fs    *vfs.MemFS

	log   []command
	seqs  map[int]uint64 // the next record index of each source
	clock int64          // processing time, Unix milliseconds
	start int64

	// outs are every sink node's outputs, which outlive a run.
	outs  map[int]output
	run   *run
	ended bool
}

// output is a sink node's output as the driver keeps it.
type output interface {
	// commit makes what checkpoints up to id (every one, for -1) staged
	// visible.
	commit(id int64)
	// abort drops what no completed checkpoint committed.
	abort()
}

// run is one run of the job, from New or a Restore to the end or the
// next Restore.
type run struct {
	d   *Driver
	j   *job.Job
	man *stream.Manual
	// yield receives when a source subtask waits for a command or its
	// goroutine has ended; once quit is closed, nobody receives.
	yield    chan struct{}
	quit     chan struct{}
	quitOnce sync.Once
	// done is closed when the job's Run has returned err.
	done chan struct{}
	err  error
	// sources are the source subtasks, by node and subtask.
	sources map[int][]source
	// mu guards exited, the source subtasks whose goroutine has ended,
	// and completed, the outcomes of checkpoints.
	mu        sync.Mutex
	exited    map[string]bool
	completed map[int64]error
	complete  chan struct{}
	// pos is the index in the log of the first command this run has not
	// executed yet: what a checkpoint's sources record.
	pos int
	// restored is the position of the checkpoint the run resumed from.
	restored int
}

// source is a source subtask as the driver commands it.
type source interface {
	send(c command)
}

// New starts a job with settings cfg, wired by build, for test t. The
// job is ended when the test ends.
func New(t TB, cfg *config.Config, build func(*job.Job), opts Options) *Driver {
	t.Helper()
	if opts.Parallelism == 0 {
		opts.Parallelism = 1
	}
	d := &Driver{t: t, cfg: cfg, build: build, opts: opts, fs: vfs.NewMem(), seqs: map[int]uint64{}, outs: map[int]output{}}
	d.clock = time.Now().UnixMilli()
	if !opts.Clock.IsZero() {
		d.clock = opts.Clock.UnixMilli()
	}
	d.start = d.clock
	t.Cleanup(d.stop)
	d.startRun()
	return d
}

// settings are the job's settings for a run under the driver.
func (d *Driver) settings() *config.Config {
	cfg := *d.cfg
	cfg.Nodes = slices.Clone(cfg.Nodes)
	for i := range cfg.Nodes {
		n := &cfg.Nodes[i]
		n.Parallelism = d.opts.Parallelism
		if n.Section == "sources" || n.Section == "sinks" {
			// The driver's, which read and write no files.
			n.Connector, n.Options = "driver", nil
		}
	}
	if d.opts.StateBackend != "" {
		cfg.StateBackend = d.opts.StateBackend
	}
	cfg.Checkpoint.Dir = "/checkpoints"
	cfg.Checkpoint.Interval = 1 << 62 // the driver triggers every checkpoint
	cfg.Checkpoint.MinPause = 0
	return &cfg
}

// startRun builds the job, resumes it from the newest completed
// checkpoint, if any, and waits until every source subtask waits for a
// command.
func (d *Driver) startRun() {
	d.t.Helper()
	cfg := d.settings()
	r := &run{d: d, yield: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{}), man: stream.NewManual(),
		sources: map[int][]source{}, exited: map[string]bool{}, completed: map[int64]error{}, complete: make(chan struct{}, 1)}
	m := &job.Manual{Stream: r.man, Now: func() int64 { return d.clock }, Driver: r,
		Completed: func(id int64, err error) {
			r.mu.Lock()
			r.completed[id] = err
			r.mu.Unlock()
			select {
			case r.complete <- struct{}{}:
			default:
			}
		},
		Exited: func(node string, sub int) {
			r.mu.Lock()
			r.exited[fmt.Sprintf("%s[%d]", node, sub)] = true
			r.mu.Unlock()
			r.wake()
		}}
	r.j = job.New(context.Background(), cfg, job.Options{Log: io.Discard, Quiet: true, FS: d.fs, Manual: m})
	d.run = r
	go func() {
		defer close(r.done)
		r.err = r.j.Run(d.build)
	}()
	n := 0
	for _, nc := range cfg.Nodes {
		if nc.Section == "sources" {
			n += nc.Parallelism
		}
	}
	for range n {
		select {
		case <-r.yield:
		case <-r.done:
			r.stop()
			d.t.Fatalf("the job did not start: %v", r.err)
		}
	}
}

// wake tells the driver that the calling source subtask waits for a
// command, or has ended.
func (r *run) wake() {
	select {
	case r.yield <- struct{}{}:
	case <-r.quit:
	}
}

// hasExited reports whether the goroutine of source subtask sub of node
// has ended.
func (r *run) hasExited(node string, sub int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exited[fmt.Sprintf("%s[%d]", node, sub)]
}

// stop lets the goroutines of the run end without the driver.
func (r *run) stop() { r.quitOnce.Do(func() { close(r.quit) }) }

// register adds a source subtask of the run.
func (r *run) register(node, sub int, s source) {
	for len(r.sources[node]) <= sub {
		r.sources[node] = append(r.sources[node], nil)
	}
	r.sources[node][sub] = s
}

// step hands command c to source subtask sub of node and waits until
// everything it caused has happened.
func (d *Driver) step(node, sub int, c command) {
	d.t.Helper()
	r := d.run
	if r.hasExited(d.cfg.Nodes[node].Name, sub) {
		return
	}
	r.sources[node][sub].send(c)
	select {
	case <-r.yield:
	case <-r.done:
	}
	d.check()
}

// check fails the test when the job has failed.
func (d *Driver) check() {
	d.t.Helper()
	r := d.run
	if r.j.Context().Err() == nil {
		return
	}
	r.stop()
	<-r.done
	if r.err == nil {
		return // it ran to its end (End)
	}
	d.ended = true
	d.t.Fatalf("the job failed: %v", r.err)
}

// live fails the test when the job has ended.
func (d *Driver) live(what string) {
	d.t.Helper()
	if d.ended {
		d.t.Fatalf("%s: the job has ended", what)
	}
}

// Push hands record rec to source node, with time ts when the source
// takes its records' time from the connector.
func (d *Driver) Push(node int, rec any, ts int64) {
	d.t.Helper()
	d.live("push to sources." + d.cfg.Nodes[node].Name)
	c := command{kind: cmdRecord, node: node, seq: d.seqs[node], rec: rec, ts: ts, clock: d.clock}
	d.seqs[node]++
	d.exec(c, true)
}

// Watermark moves the watermark of every subtask of source node to w
// (Unix milliseconds): no record at or before w is expected from it any
// more.
func (d *Driver) Watermark(node int, w int64) {
	d.t.Helper()
	d.live("watermark of sources." + d.cfg.Nodes[node].Name)
	d.exec(command{kind: cmdWatermark, node: node, ts: w, clock: d.clock}, true)
}

// WatermarkAll moves the watermark of every source with event time to w.
func (d *Driver) WatermarkAll(w int64) {
	d.t.Helper()
	for i, n := range d.cfg.Nodes {
		if n.Section == "sources" {
			d.Watermark(i, w)
		}
	}
}

// Advance moves processing time on by dt: the job's clock reads the new
// time, and every chain that keeps processing time (processing-time
// windows and timers) gets a tick, which fires what is due.
func (d *Driver) Advance(dt time.Duration) {
	d.t.Helper()
	d.live("advance processing time")
	if dt < 0 {
		d.t.Fatalf("advance processing time by %s: time does not go back", dt)
	}
	d.exec(command{kind: cmdTick, clock: d.clock + dt.Milliseconds()}, true)
}

// Now is processing time.
func (d *Driver) Now() time.Time { return time.UnixMilli(d.clock).UTC() }

// exec runs command c, logging it unless it is replayed.
func (d *Driver) exec(c command, log bool) {
	d.t.Helper()
	if log {
		d.log = append(d.log, c)
	}
	r := d.run
	r.pos++
	switch c.kind {
	case cmdRecord:
		d.step(c.node, int(c.seq%uint64(d.opts.Parallelism)), c)
	case cmdWatermark:
		for sub := range d.opts.Parallelism {
			d.step(c.node, sub, c)
		}
	case cmdTick:
		d.clock = c.clock
		d.tick()
	}
}

// tick hands a tick to the chains that keep processing time, in the
// driver's goroutine (every source waits meanwhile); a panic fails the
// job and the test.
func (d *Driver) tick() {
	d.t.Helper()
	r := d.run
	func() {
		defer func() {
			if p := recover(); p != nil {
				err, ok := p.(error)
				if !ok {
					err = fmt.Errorf("%v", p)
				}
				r.j.Fail(fmt.Errorf("a processing-time tick: %w", err))
			}
		}()
		r.man.Tick()
	}()
	d.check()
}

// Checkpoint takes a checkpoint and waits until it is complete and the
// sinks' output up to it committed; it returns the checkpoint's id.
func (d *Driver) Checkpoint() int64 {
	d.t.Helper()
	d.live("checkpoint")
	r := d.run
	cp := r.j.Checkpointer()
	if !cp.Enabled() {
		d.t.Fatalf("checkpoint: the pipeline takes no checkpoints (checkpoint.mode is none)")
	}
	id := cp.Trigger()
	if id == 0 {
		d.check()
		d.t.Fatalf("checkpoint: the coordinator started none")
	}
	for _, node := range d.sourceNodes() {
		for sub := range r.sources[node] {
			d.step(node, sub, command{kind: cmdPoll})
		}
	}
	for {
		r.mu.Lock()
		err, ok := r.completed[id]
		r.mu.Unlock()
		if ok {
			if err != nil {
				d.t.Fatalf("checkpoint %d failed: %v", id, err)
			}
			break
		}
		select {
		case <-r.complete:
		case <-r.done:
			d.check()
			d.t.Fatalf("checkpoint %d: the job ended: %v", id, r.err)
		}
	}
	for _, o := range d.outs {
		o.commit(id)
	}
	return id
}

// Restore ends the job as a crash would, drops what the sinks emitted
// that no completed checkpoint committed, builds the job again from the
// newest completed checkpoint (from the start without one), and replays
// every command given after it: records, watermarks and processing time,
// which goes back to what it was at the checkpoint and moves on as it did.
func (d *Driver) Restore() {
	d.t.Helper()
	d.live("restore")
	d.crash()
	for _, o := range d.outs {
		o.abort()
	}
	d.startRun()
	r := d.run
	r.pos = r.restored
	d.clock = d.start
	if r.pos > 0 {
		d.clock = d.log[r.pos-1].clock
	}
	for _, c := range d.log[r.pos:] {
		d.exec(c, false)
	}
}

// Rescale is Restore onto another parallelism: every node gets p
// subtasks, the keyed state goes to them by key group, and the replayed
// records go to the new source subtasks in turn.
func (d *Driver) Rescale(p int) {
	d.t.Helper()
	if p < 1 {
		d.t.Fatalf("rescale to parallelism %d: it must be at least 1", p)
	}
	d.opts.Parallelism = p
	d.Restore()
}

// crash stops the running job at once.
func (d *Driver) crash() {
	r := d.run
	r.stop()
	r.j.Fail(errCrash)
	<-r.done
}

var errCrash = errors.New("stopped by the test driver")

// End ends the input of every source: the watermarks go to the end of
// time (every window fires), the job takes its final checkpoint and
// commits the rest of the output.
func (d *Driver) End() {
	d.t.Helper()
	d.live("end")
	r := d.run
	for round := 0; ; round++ {
		alive := false
		for _, node := range d.sourceNodes() {
			for sub := range r.sources[node] {
				if !r.hasExited(d.cfg.Nodes[node].Name, sub) {
					alive = true
					d.step(node, sub, command{kind: cmdEnd})
				}
			}
		}
		if !alive {
			break
		}
		if round > 1 {
			d.t.Fatalf("end: a source did not end")
		}
	}
	<-r.done
	d.ended = true
	if r.err != nil {
		d.t.Fatalf("the job failed at its end: %v", r.err)
	}
	for _, o := range d.outs {
		o.commit(-1)
	}
}

// stop ends a job still running when the test ends.
func (d *Driver) stop() {
	if !d.ended && d.run != nil {
		d.crash()
		d.ended = true
	}
}

// sourceNodes are the source nodes, in order.
func (d *Driver) sourceNodes() []int {
	var ns []int
	for i, n := range d.cfg.Nodes {
		if n.Section == "sources" {
			ns = append(ns, i)
		}
	}
	return ns
}

// runOf returns the run that job j is, for its sources and sinks.
func runOf(j *job.Job) *run {
	m := j.ManualRun()
	if m == nil {
		panic("a test driver's source or sink in a job that no driver runs: generate the job with pipegen generate --test")
	}
	return m.Driver.(*run)
}
