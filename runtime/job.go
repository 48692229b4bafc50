package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// Job is one run of a pipeline: its settings after the command line, and
// the goroutines of its subtasks.
type Job struct {
	Config *Config

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	// helpers counts the goroutines beside the subtasks.
	helpers sync.WaitGroup

	mu  sync.Mutex
	err error

	sources  []*SourceCtl
	lingers  []*atomic.Bool
	progress io.Writer
	log      io.Writer
	quiet    bool

	// fs is where checkpoints and transactional sinks write.
	fs vfs.FS
	// from is the checkpoint to resume from (--from-checkpoint).
	from string
	// restored is the checkpoint the job resumes from, nil for a fresh
	// start.
	restored *Loaded
	// nextID is the id of the next checkpoint.
	nextID int64
	// committed is the id of the newest completed checkpoint.
	committed atomic.Int64
	// tasks counts the chain subtasks, each of which acknowledges every
	// checkpoint.
	tasks int
	// writes carries snapshots to the writer, acks the written ones to the
	// coordinator.
	writes chan *Snapshot
	acks   chan ack
	// atEnd counts the source subtasks at the end of their input;
	// allEnded is closed once all are.
	atEnd    atomic.Int64
	allEnded chan struct{}
	// building is set while build runs; pending are the subtasks it
	// started, which run once it is done.
	building bool
	pending  []func()
}

// NewJob prepares a run of the pipeline with the given settings.
func NewJob(ctx context.Context, cfg *Config) *Job {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Job{Config: cfg, ctx: ctx, cancel: cancel, log: os.Stderr, fs: vfs.Default,
		writes: make(chan *Snapshot, 64), acks: make(chan ack, 64), allEnded: make(chan struct{})}
}

func (j *Job) taskCount() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.tasks
}

// Logf writes one line to the job's log (standard error), prefixed with
// the pipeline's name.
func (j *Job) Logf(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fmt.Fprintf(j.log, j.Config.Name+": "+format+"\n", args...)
}

// Context is cancelled when the job fails or is stopped.
func (j *Job) Context() context.Context { return j.ctx }

// Parallelism returns the number of subtasks of node id.
func (j *Job) Parallelism(node int) int { return j.Config.Nodes[node].Parallelism }

// MaxParallelism is the number of key groups.
func (j *Job) MaxParallelism() int { return j.Config.MaxParallelism }

// Node returns the settings of node id.
func (j *Job) Node(id int) *NodeConfig { return &j.Config.Nodes[id] }

// Go runs subtask sub of node (the head of a chain) in its own goroutine. A
// panic in fn, from user code or from Abort, fails the job with the node and
// subtask named.
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
		defer func() {
			if r := recover(); r != nil {
				j.Fail(taskError(node, sub, r))
			}
		}()
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

// abort is the panic value of Abort: an error that stops the subtask.
type abort struct{ err error }

// Abort stops the calling subtask with err. Generated code and connectors
// call it deep inside the per-record call chain, where returning an error
// through every fused operator would cost on every record; Job.Go recovers
// it.
func Abort(err error) {
	panic(abort{err})
}

// Abortf is Abort with a formatted error.
func Abortf(format string, args ...any) {
	panic(abort{fmt.Errorf(format, args...)})
}

// errCanceled is the cause of blocking operations given up because the job
// is stopping; such a subtask did not fail by itself.
var errCanceled = errors.New("job canceled")

func taskError(node string, sub int, r any) error {
	switch v := r.(type) {
	case abort:
		if errors.Is(v.err, errCanceled) {
			return v.err
		}
		return fmt.Errorf("%s[%d]: %w", node, sub, v.err)
	case *recordPanic:
		return &PanicError{Node: node, Subtask: sub, Value: v.value, Record: v.record, Origin: v.origin, Stack: v.stack}
	default:
		return &PanicError{Node: node, Subtask: sub, Value: r, Stack: debug.Stack()}
	}
}

// PanicError is a panic in user code, with the node and subtask it
// happened in and, where known, the record it was processing and where
// that record came from.
type PanicError struct {
	Node    string
	Subtask int
	Value   any
	Record  string // the record, printed with %+v
	Origin  string // file:line of the record, for a file source's chain
	Stack   []byte
}

func (e *PanicError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s[%d]: panic: %v", e.Node, e.Subtask, e.Value)
	if e.Record != "" {
		fmt.Fprintf(&b, "\nrecord: %s", e.Record)
	}
	if e.Origin != "" {
		fmt.Fprintf(&b, "\nfrom: %s", e.Origin)
	}
	fmt.Fprintf(&b, "\n\n%s", e.Stack)
	return b.String()
}

// recordPanic is a panic annotated, on its way up, with the record that
// caused it.
type recordPanic struct {
	value  any
	record string
	origin string
	stack  []byte
}

// maxRecordText bounds how much of a record a panic message shows.
const maxRecordText = 300

// PanicWithRecord panics again with p annotated with the record being
// processed. Generated code calls it from a deferred recover around each
// batch: no cost per record until something panics.
func PanicWithRecord[T any](p any, rec T) {
	switch p.(type) {
	case abort, *recordPanic:
		panic(p)
	}
	text := fmt.Sprintf("%+v", rec)
	if len(text) > maxRecordText {
		text = text[:maxRecordText] + "..."
	}
	// The stack still holds the frames of the panic: deferred calls run on
	// top of them.
	panic(&recordPanic{value: p, record: text, stack: debug.Stack()})
}

// panicWithOrigin panics again with p annotated with where the record came
// from.
func panicWithOrigin(p any, origin string) {
	switch v := p.(type) {
	case abort:
		panic(p)
	case *recordPanic:
		if v.origin == "" {
			v.origin = origin
		}
		panic(v)
	}
	panic(&recordPanic{value: p, origin: origin, stack: debug.Stack()})
}

// fatalError is a failure that a restart cannot mend: a bad setting, a
// missing input file, a checkpoint that does not fit the program.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// Run starts the job with build and waits until every subtask has finished
// and the final checkpoint has committed the output, or one has failed.
func (j *Job) Run(build func(j *Job)) error {
	done := make(chan struct{})
	cp := j.Config.Checkpoint
	st := &Storage{FS: j.fs, Dir: cp.Dir}
	if err := j.prepareRun(st, j.from); err != nil {
		if errors.Is(err, errFinished) {
			j.Logf("checkpoint %d is final: the job ran to the end of its input already, and its output is committed (remove %s to run it again)", j.restored.Manifest.ID, cp.Dir)
			return nil
		}
		return &fatalError{err}
	}
	// The helpers (progress, linger, writers, coordinator) stop with the
	// job, and Run waits for them: a restart must not begin while the last
	// attempt still writes a manifest or commits files.
	defer func() {
		close(done)
		j.cancel(errStopped)
		j.helpers.Wait()
	}()
	if j.progress != nil {
		j.helper(func() { j.reportProgress(j.progress, done) })
	}
	var buildErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				buildErr = taskError("build", 0, r)
				j.Fail(buildErr)
			}
		}()
		j.building = true
		defer func() { j.building = false }()
		build(j)
	}()
	if buildErr != nil {
		for range j.pending {
			j.wg.Done()
		}
		j.wg.Wait()
		return &fatalError{buildErr}
	}
	if len(j.sources) == 0 {
		close(j.allEnded)
	}
	for _, start := range j.pending {
		start()
	}
	j.helper(func() { j.linger(done) })
	var coord *coordinator
	if cp.Mode != NoCheckpoints {
		coord = newCoordinator(j, st, j.nextID)
		for range 2 {
			j.helper(func() { j.writer(st) })
		}
		j.helper(coord.run)
	}
	if err := j.Wait(); err != nil {
		return err
	}
	if coord != nil {
		select {
		case <-coord.done:
			if coord.finalErr != nil {
				return fmt.Errorf("final checkpoint: %w", coord.finalErr)
			}
		case <-j.ctx.Done():
			return context.Cause(j.ctx)
		}
	}
	return nil
}

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

// sourceAtEnd records that a source subtask has read all of its input.
func (j *Job) sourceAtEnd() {
	j.mu.Lock()
	n := len(j.sources)
	j.mu.Unlock()
	if j.atEnd.Add(1) == int64(n) {
		close(j.allEnded)
	}
}

// allAtEnd reports whether every source subtask has read all its input.
func (j *Job) allAtEnd() bool {
	select {
	case <-j.allEnded:
		return true
	default:
		return false
	}
}
