package checkpoint

import (
	"context"
	"fmt"
	"math"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// Output is what the protocol needs of a job's transactional sinks: their
// files become visible when a checkpoint completes, and what no completed
// checkpoint commits is removed when a run starts.
type Output interface {
	// Commit makes the output of completed checkpoint m visible. It is
	// idempotent: recovery runs it again for the checkpoint it resumes
	// from.
	Commit(m *storage.Manifest) error
	// Clean removes the sink files that no completed checkpoint commits,
	// before a run starts: those of m's newer, failed attempts, or, when m
	// is nil (a fresh start), every earlier output.
	Clean(m *storage.Manifest) error
}

// Checkpointer is the checkpoint side of one run of a job: the subtasks'
// tasks and the sources' control blocks, the checkpoint the run resumes
// from, and the coordinator and writers while it runs.
type Checkpointer struct {
	cfg    *config.Config
	ctx    context.Context
	logf   func(format string, args ...any)
	fs     vfs.FS
	st     *storage.Storage
	out    Output
	events *events.Writer
	// verbose logs a line per completed checkpoint.
	verbose bool
	// allowNonRestored lets a run resume from a checkpoint or savepoint
	// that holds state of nodes this version does not have.
	allowNonRestored bool

	mu sync.Mutex
	// tasks counts the chain subtasks, each of which acknowledges every
	// checkpoint.
	tasks    int
	taskList []*Task
	// closers run when the run ends (Close).
	closers []func()
	sources []*SourceCtl
	// restored is the checkpoint the run resumes from, nil for a fresh
	// start.
	restored *storage.Loaded
	// nextID is the id of the next checkpoint.
	nextID int64
	// dropping is set when a restore drops what it decodes (OnRestore:
	// pebble stores), so that the garbage collector must run meanwhile.
	dropping atomic.Bool
	// committed is the id of the newest completed checkpoint.
	committed atomic.Int64
	// writes carries snapshots to the writer, acks the written ones to the
	// coordinator.
	writes chan *Snapshot
	acks   chan ack
	// unwritten counts the snapshots submitted and not written yet.
	unwritten atomic.Int64
	// atEnd counts the source subtasks at the end of their input;
	// allEnded is closed once all are.
	atEnd    atomic.Int64
	allEnded chan struct{}
	// draining is set by a savepoint request with drain: the sources stop
	// reading, end event time and wait; drained counts those that have,
	// and allDrained is closed once every source subtask has (or is at
	// the end of its input).
	draining   atomic.Bool
	drained    atomic.Int64
	allDrained chan struct{}
	drainOnce  sync.Once
	// coord is the coordinator, once Start has run.
	coord *coordinator
	// stopReq asks the coordinator to stop the job at the next completed
	// checkpoint; stopped is closed once that checkpoint, stoppedAt, is
	// complete and its output committed.
	stopReq   chan struct{}
	stopped   chan struct{}
	stoppedAt atomic.Int64
	stopOnce  stopOnce
	// savepointReqs carries savepoint requests to the coordinator;
	// savepointID is the checkpoint taken for the newest one.
	savepointReqs chan *savepointReq
	savepointID   atomic.Int64
	// origin is the id of the savepoint the job's state descends from
	// (recorded in every manifest), "" for none.
	origin string
	// manual is set when a test driver runs the job (Options.Manual);
	// triggers carries its requests for a checkpoint to the coordinator.
	manual    bool
	triggers  chan chan int64
	now       func() int64
	completed func(id int64, err error)
}

// Options are what a Checkpointer writes through and reports to.
type Options struct {
	// FS is where checkpoints and transactional sinks write.
	FS vfs.FS
	// Output is the job's transactional sinks.
	Output Output
	// Logf writes a line to the job's log; Verbose adds a line per
	// completed checkpoint.
	Logf    func(format string, args ...any)
	Verbose bool
	// Events receives the machine-readable events (nil for none).
	Events *events.Writer
	// AllowNonRestoredState resumes from a checkpoint or savepoint that
	// holds the state of nodes this version no longer has, leaving it
	// behind (run --allow-non-restored-state); without it such a resume
	// is refused.
	AllowNonRestoredState bool
	// Manual hands the checkpoints to a test driver: the coordinator
	// takes one only when Trigger asks, Completed learns when each
	// completes, and a source at the end of its input never waits for
	// the others (the driver ends them one after another).
	Manual    bool
	Completed func(id int64, err error)
	// Now is processing time in Unix milliseconds (Task.NowMillis); nil
	// for the wall clock.
	Now func() int64
}

// New prepares the checkpoints of one run of a job with settings cfg,
// stopped by ctx.
func New(ctx context.Context, cfg *config.Config, o Options) *Checkpointer {
	return &Checkpointer{cfg: cfg, ctx: ctx, logf: o.Logf, fs: o.FS, out: o.Output, verbose: o.Verbose, events: o.Events, allowNonRestored: o.AllowNonRestoredState,
		st:     &storage.Storage{FS: o.FS, Dir: cfg.Checkpoint.Dir},
		writes: make(chan *Snapshot, 64), acks: make(chan ack, 64), allEnded: make(chan struct{}), allDrained: make(chan struct{}),
		stopReq: make(chan struct{}, 1), stopped: make(chan struct{}), savepointReqs: make(chan *savepointReq),
		manual: o.Manual, triggers: make(chan chan int64), now: o.Now, completed: o.Completed}
}

// Trigger starts a checkpoint now, for a test driver (Options.Manual),
// and returns its id, which every source then finds in its Poll; 0 when
// none could start (one is under way, or the job has stopped). The driver
// learns of its completion through Options.Completed.
func (c *Checkpointer) Trigger() int64 {
	reply := make(chan int64, 1)
	select {
	case c.triggers <- reply:
	case <-c.ctx.Done():
		return 0
	}
	select {
	case id := <-reply:
		return id
	case <-c.ctx.Done():
		return 0
	}
}

// NowMillis is processing time in Unix milliseconds: a test driver's
// clock, or state.NowMillis (the wall clock, which tests of state TTL
// set). Timers and state TTL read it.
func (c *Checkpointer) NowMillis() int64 {
	if c.now != nil {
		return c.now()
	}
	return state.NowMillis()
}

// RequestStop asks for a checkpoint now, after which the job is to stop:
// Stopped is closed once it is complete and its output committed. A
// checkpoint that fails is tried again at once. The job may end first (the
// final checkpoint), or never stop this way when it takes no checkpoints.
func (c *Checkpointer) RequestStop() {
	select {
	case c.stopReq <- struct{}{}:
	default:
	}
}

// Stopped is closed when the checkpoint a stop asked for is complete.
func (c *Checkpointer) Stopped() <-chan struct{} { return c.stopped }

// StoppedAt is the checkpoint the job stopped at, 0 when it did not stop.
func (c *Checkpointer) StoppedAt() int64 { return c.stoppedAt.Load() }

// Enabled reports whether the job takes checkpoints.
func (c *Checkpointer) Enabled() bool { return c.cfg.Checkpoint.Mode != config.NoCheckpoints }

// Mode is the job's checkpoint mode: exactly-once, at-least-once or none.
func (c *Checkpointer) Mode() string { return c.cfg.Checkpoint.Mode }

// Settings are the job's checkpoint settings for this run.
func (c *Checkpointer) Settings() config.CheckpointConfig { return c.cfg.Checkpoint }

// Storage is the checkpoint directory.
func (c *Checkpointer) Storage() *storage.Storage { return c.st }

// FS is where checkpoints and transactional sinks write.
func (c *Checkpointer) FS() vfs.FS { return c.fs }

// Committed is the id of the newest completed checkpoint, 0 before the
// first.
func (c *Checkpointer) Committed() int64 { return c.committed.Load() }

// NextID is the id the next checkpoint takes.
func (c *Checkpointer) NextID() int64 { return c.nextID }

// Restored is the checkpoint the run resumes from, nil for a fresh start.
func (c *Checkpointer) Restored() *storage.Loaded { return c.restored }

func (c *Checkpointer) taskCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks
}

// Start runs the coordinator and the writers in goroutines started by
// spawn, once every subtask is registered; a job that has no source ends
// its input at once.
func (c *Checkpointer) Start(spawn func(func())) {
	c.mu.Lock()
	n := len(c.sources)
	c.mu.Unlock()
	if n == 0 {
		close(c.allEnded)
	}
	if !c.Enabled() {
		return
	}
	c.coord = newCoordinator(c, c.nextID)
	for range 2 {
		spawn(c.writer)
	}
	spawn(c.coord.run)
}

// Final waits for the job's final checkpoint, which commits the rest of the
// output, once every subtask has ended; it returns at once when the job
// takes no checkpoints.
func (c *Checkpointer) Final() error {
	if c.coord == nil {
		return nil
	}
	select {
	case <-c.coord.done:
		if c.coord.finalErr != nil {
			return fmt.Errorf("final checkpoint: %w", c.coord.finalErr)
		}
		return nil
	case <-c.ctx.Done():
		return context.Cause(c.ctx)
	}
}

// RunRestores reads the keyed state of every subtask from the checkpoint
// the job resumes from, the subtasks in parallel (as many at a time as
// there are processors), and returns the first failure. The job calls it
// once every subtask is built and before any runs.
func (c *Checkpointer) RunRestores() error {
	c.mu.Lock()
	tasks := c.taskList
	c.mu.Unlock()
	// What the memory backend decodes stays: the garbage collector
	// would have next to nothing to free meanwhile (the values a delta
	// replaces, and a file's buffer for its sections), and each of its
	// cycles would mark the state restored so far again, which cost
	// a third of the CPU of a restore of 10M keys. It is off until the
	// restore is over when only the memory backend restores, or under a
	// GOMEMLIMIT, which still holds. Otherwise it runs less often
	// (GOGC 400, or what it was if higher): a restore into pebble stores
	// decodes values and drops them as it goes, and must not keep them
	// all.
	if debug.SetMemoryLimit(-1) != math.MaxInt64 || !c.dropping.Load() {
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
	} else if old := debug.SetGCPercent(400); old > 400 || old < 0 {
		debug.SetGCPercent(old)
	} else {
		defer debug.SetGCPercent(old)
	}
	sem := make(chan struct{}, goruntime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, t := range tasks {
		if len(t.restores) == 0 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() {
				if r := recover(); r != nil {
					err := fault.FromPanic(t.name, t.sub, r)
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
				<-sem
				wg.Done()
			}()
			for _, fn := range t.restores {
				fn()
			}
			t.restores = nil
		}()
	}
	wg.Wait()
	return first
}

// Close runs the work that subtasks' states added with OnClose. The job
// calls it once every subtask and writer has stopped.
func (c *Checkpointer) Close() {
	c.mu.Lock()
	closers := c.closers
	c.closers = nil
	c.mu.Unlock()
	for _, fn := range closers {
		fn()
	}
}
