// Package job supervises one run of a pipeline: it starts the subtasks'
// goroutines, fails the run on the first error or panic, flushes partial
// batches every Linger, reports progress, and, with package checkpoint,
// resumes from the newest checkpoint and waits for the final one. Restart
// decides when a failed run is tried again.
package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/logs"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/stream"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// Options are how one run of a job reports and where it resumes from.
type Options struct {
	// Log receives the job's log lines (standard error when nil), as text,
	// unless Logger is set.
	Log io.Writer
	// Logger is the job's logger (package logs); nil for text on Log.
	Logger *slog.Logger
	// Progress, when set, receives a progress line every few seconds and a
	// line per completed checkpoint.
	Progress io.Writer
	// Quiet leaves out the lines about where the run resumes from and what
	// it cleaned up.
	Quiet bool
	// From is the checkpoint folder to resume from (--from-checkpoint); ""
	// for the newest complete one in the checkpoint directory.
	From string
	// FromSavepoint makes From a savepoint's folder (--from-savepoint).
	FromSavepoint bool
	// FS is where checkpoints and transactional sinks write (the
	// operating system's file system when nil).
	FS vfs.FS
	// Events receives the machine-readable events (nil for none).
	Events *events.Writer
	// AllowNonRestoredState resumes even when the checkpoint holds state
	// of nodes this version does not have (run --allow-non-restored-state).
	AllowNonRestoredState bool
	// Fresh starts the job over: the checkpoints and the sinks' output of
	// earlier runs are moved aside, not deleted (run --fresh).
	Fresh bool
	// Metrics are the job's counters, which outlive one run of it (New
	// makes them when nil).
	Metrics *metrics.Registry
	// Started, if set, is called once the run holds its checkpoint
	// directory and knows where it resumes from, before it builds the
	// job (the command line then starts its control endpoint).
	Started func()
	// Manual, if set, hands the run to a test driver (package drive).
	Manual *Manual
}

// Manual is what a test driver (package drive) takes over of a run: the
// data plane goes step by step (stream.Manual: every inbox Direct, ticks
// handed out by the driver), checkpoints are taken when the driver asks
// (checkpoint.Checkpointer.Trigger), processing time is the driver's
// clock, and nothing runs on a timer: no linger, no periodic checkpoint.
type Manual struct {
	Stream *stream.Manual
	// Now is processing time in Unix milliseconds.
	Now func() int64
	// Completed learns when a checkpoint completes (err nil) or fails.
	Completed func(id int64, err error)
	// Exited learns when the goroutine of a subtask has returned, after
	// its chain has ended (or failed).
	Exited func(node string, sub int)
	// Driver is the driver's own, for its sources and sinks to find it
	// (ManualRun).
	Driver any
}

// ManualRun is what a test driver took over of the run, nil when the run
// goes by itself.
func (j *Job) ManualRun() *Manual { return j.opts.Manual }

// Job is one run of a pipeline: its settings after the command line, and
// the goroutines of its subtasks.
type Job struct {
	Config *config.Config
	opts   Options

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	// helpers counts the goroutines beside the subtasks.
	helpers sync.WaitGroup

	mu  sync.Mutex
	err error

	lingers []*atomic.Bool
	cp      *checkpoint.Checkpointer

	// building is set while build runs; pending are the subtasks it
	// started, which run once it is done.
	building bool
	pending  []func()

	// Shares holds what the run's subtasks share (connector.Sharer): the
	// subtasks of a node, which run each in its goroutine, coordinate
	// through it (a generator's keep pace).
	connector.Shares
}

// New prepares a run of the pipeline with the given settings.
func New(ctx context.Context, cfg *config.Config, opts Options) *Job {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New(cfg)
	}
	if opts.Logger == nil {
		opts.Logger, _ = logs.New(opts.Log, logs.Text, cfg.Name)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	j := &Job{Config: cfg, opts: opts, ctx: ctx, cancel: cancel}
	co := checkpoint.Options{FS: opts.FS, Output: output{j}, Logf: j.Logf, Verbose: opts.Progress != nil, Events: opts.Events,
		AllowNonRestoredState: opts.AllowNonRestoredState}
	if m := opts.Manual; m != nil {
		co.Manual, co.Now, co.Completed = true, m.Now, m.Completed
	}
	j.cp = checkpoint.New(ctx, cfg, co)
	return j
}

// Manual is the driven data plane of a run that a test driver runs, nil
// otherwise (package stream asks for it).
func (j *Job) Manual() *stream.Manual {
	if j.opts.Manual == nil {
		return nil
	}
	return j.opts.Manual.Stream
}

// NowMillis is processing time in Unix milliseconds: the wall clock, or
// a test driver's clock.
func (j *Job) NowMillis() int64 { return j.cp.NowMillis() }

// Logf writes one line to the job's log (standard error), prefixed with
// the pipeline's name.
func (j *Job) Logf(format string, args ...any) {
	j.opts.Logger.Info(fmt.Sprintf(format, args...))
}

// Logger is the job's logger: lines about a node and subtask carry them
// as the attributes "node" and "subtask".
func (j *Job) Logger() *slog.Logger { return j.opts.Logger }

// Context is cancelled when the job fails or is stopped.
func (j *Job) Context() context.Context { return j.ctx }

// Done is closed when the job fails or is stopped.
func (j *Job) Done() <-chan struct{} { return j.ctx.Done() }

// Parallelism returns the number of subtasks of node id.
func (j *Job) Parallelism(node int) int { return j.Config.Nodes[node].Parallelism }

// MaxParallelism is the number of key groups.
func (j *Job) MaxParallelism() int { return j.Config.MaxParallelism }

// Aligned reports whether checkpoint barriers are aligned (exactly-once).
func (j *Job) Aligned() bool { return j.Config.Checkpoint.Mode == config.ExactlyOnce }

// Node returns the settings of node id.
func (j *Job) Node(id int) *config.NodeConfig { return &j.Config.Nodes[id] }

// Metrics are the job's counters.
func (j *Job) Metrics() *metrics.Registry { return j.opts.Metrics }

// Meter returns the counters of subtask sub of the chain of nodes, head
// first, which generated code publishes its counts to.
func (j *Job) Meter(sub int, nodes ...int) *metrics.Chain { return j.opts.Metrics.Meter(sub, nodes...) }

var _ connector.Sharer = (*Job)(nil)

// Checkpointer is the checkpoint side of the run.
func (j *Job) Checkpointer() *checkpoint.Checkpointer { return j.cp }

// Checkpoints is the checkpoint side of the run as connectors see it.
func (j *Job) Checkpoints() connector.Checkpoints { return j.cp }

// Task registers subtask sub of the chain headed by node head with the
// checkpoints.
func (j *Job) Task(head, sub int) *checkpoint.Task { return j.cp.Task(head, sub) }

// Go runs subtask sub of node (the head of a chain) in its own goroutine. A
// panic in fn, from user code or from fault.Abort, fails the job with the
// node and subtask named.
//
// While the job is being built, the goroutine waits to start until the
// build is done, so that every subtask is registered (for the
// checkpoint coordinator) before any runs.
func (j *Job) Go(node string, sub int, fn func()) {
	j.wg.Add(1)
	if j.building {
		j.pending = append(j.pending, func() { j.Go(node, sub, fn); j.wg.Done() })
		return
	}
	go func() {
		defer j.wg.Done()
		if m := j.opts.Manual; m != nil && m.Exited != nil {
			defer m.Exited(node, sub)
		}
		defer func() {
			if r := recover(); r != nil {
				j.Fail(fault.FromPanic(node, sub, r))
			}
		}()
		// The labels name the subtask in a CPU profile (run --cpuprofile;
		// go tool pprof -tags): how the work splits over the subtasks,
		// which the process's CPU time alone does not tell. Setting them
		// costs once per goroutine; the profiler reads them only when it
		// samples.
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("chain", node, "subtask", strconv.Itoa(sub))))
		fn()
	}()
}

// Fail stops the job with err; the first failure wins.
func (j *Job) Fail(err error) {
	j.mu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.mu.Unlock()
	j.cancel(err)
}

// Wait waits for every subtask and returns the job's first failure.
func (j *Job) Wait() error {
	j.wg.Wait()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil && j.ctx.Err() != nil {
		return context.Cause(j.ctx)
	}
	return j.err
}

// Run starts the job with build and waits until every subtask has finished
// and the final checkpoint has committed the output, or one has failed.
// A failure that a restart cannot mend is a *fault.Fatal.
func (j *Job) Run(build func(j *Job)) error {
	done := make(chan struct{})
	release, err := j.acquire()
	if err != nil {
		return &fault.Fatal{Err: err}
	}
	defer release()
	if j.opts.Fresh {
		if err := j.moveAside(time.Now().UTC().Format("20060102T150405Z")); err != nil {
			return &fault.Fatal{Err: fmt.Errorf("--fresh: %w", err)}
		}
	}
	if err = j.cp.Recover(j.opts.From, j.opts.FromSavepoint, j.opts.Quiet); err != nil {
		if errors.Is(err, checkpoint.ErrFinished) {
			if err := j.checkFinishedInput(j.cp.Restored().Manifest); err != nil {
				return &fault.Fatal{Err: err}
			}
			j.Logf("checkpoint %d is final: the job ran to the end of its input already, and its output is committed (run --fresh to run it again: the old checkpoints and output are moved aside)", j.cp.Restored().Manifest.ID)
			return nil
		}
		return &fault.Fatal{Err: err}
	}
	if j.opts.Started != nil {
		j.opts.Started()
	}
	// The helpers (progress, linger, writers, coordinator) stop with the
	// job, and Run waits for them: a restart must not begin while the last
	// attempt still writes a manifest or commits files.
	defer func() {
		close(done)
		j.cancel(errStopped)
		j.helpers.Wait()
		j.cp.Close()
	}()
	if j.opts.Progress != nil {
		j.helper(func() { j.reportProgress(j.opts.Progress, done) })
	}
	var buildErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				buildErr = fault.FromPanic("build", 0, r)
				j.Fail(buildErr)
			}
		}()
		j.building = true
		defer func() { j.building = false }()
		build(j)
	}()
	if buildErr == nil {
		// Restored state is read once every subtask is built, the subtasks
		// in parallel.
		start := time.Now()
		if buildErr = j.cp.RunRestores(); buildErr != nil {
			j.Fail(buildErr)
		} else if l := j.cp.Restored(); l != nil && !j.opts.Quiet {
			j.Logf("state of checkpoint %d restored in %s", l.Manifest.ID, time.Since(start).Round(time.Millisecond))
		}
	}
	if buildErr != nil {
		for range j.pending {
			j.wg.Done()
		}
		j.wg.Wait()
		return &fault.Fatal{Err: buildErr}
	}
	for _, start := range j.pending {
		start()
	}
	j.opts.Metrics.SetState(metrics.Running)
	if j.opts.Manual == nil {
		j.helper(func() { j.linger(done) })
	}
	j.cp.Start(j.helper)
	j.helper(func() {
		select {
		case <-j.cp.Stopped():
			j.cancel(errStopped)
		case <-done:
		}
	})
	err = j.Wait()
	if id := j.cp.StoppedAt(); id > 0 {
		return &Stopped{Checkpoint: id}
	}
	if err != nil {
		return err
	}
	return j.cp.Final()
}

// Stop asks the run to stop at a checkpoint taken now: once it is complete
// and its output committed, Run returns a *Stopped, and the next run
// resumes from it. A job without checkpoints stops at once: Run returns
// ErrStoppedUncheckpointed.
func (j *Job) Stop() {
	if !j.cp.Enabled() {
		j.Fail(ErrStoppedUncheckpointed)
		return
	}
	j.cp.RequestStop()
}

// Stopped is what Run returns when Stop stopped it at a checkpoint.
type Stopped struct{ Checkpoint int64 }

func (s *Stopped) Error() string {
	return fmt.Sprintf("stopped at checkpoint %d", s.Checkpoint)
}

// ErrStoppedUncheckpointed is what Run returns when Stop stopped a job that
// takes no checkpoints: there is nothing to resume from.
var ErrStoppedUncheckpointed = errors.New("stopped before the end of the input; checkpoint.mode is none, so a new run starts from the beginning")

// helper runs fn in a goroutine that Run waits for.
func (j *Job) helper(fn func()) {
	j.helpers.Add(1)
	go func() {
		defer j.helpers.Done()
		fn()
	}()
}

// errStopped ends the job's helpers (writer, coordinator) after success.
var errStopped = errors.New("job finished")
