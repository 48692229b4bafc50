package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// Job is one run of a pipeline: its settings after the command line, and
// the goroutines of its subtasks.
type Job struct {
	Config *Config

	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	mu  sync.Mutex
	err error

	sources  []*SourceCtl
	progress io.Writer
	log      io.Writer
}

// NewJob prepares a run of the pipeline with the given settings.
func NewJob(ctx context.Context, cfg *Config) *Job {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Job{Config: cfg, ctx: ctx, cancel: cancel, log: os.Stderr}
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
func (j *Job) Go(node string, sub int, fn func()) {
	j.wg.Add(1)
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
	default:
		return &PanicError{Node: node, Subtask: sub, Value: r, Stack: debug.Stack()}
	}
}

// PanicError is a panic in user code, with the node and subtask it
// happened in.
type PanicError struct {
	Node    string
	Subtask int
	Value   any
	Stack   []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%s[%d]: panic: %v\n\n%s", e.Node, e.Subtask, e.Value, e.Stack)
}

// Run starts the job with build and waits until every subtask has finished
// or one has failed.
func (j *Job) Run(build func(j *Job)) error {
	done := make(chan struct{})
	defer close(done)
	if j.progress != nil {
		go j.reportProgress(j.progress, done)
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				j.Fail(taskError("build", 0, r))
			}
		}()
		build(j)
	}()
	return j.Wait()
}
