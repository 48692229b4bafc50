package stream

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// The checkpoint modes, as the tests name them.
const (
	ExactlyOnce = "exactly-once"
	AtLeastOnce = "at-least-once"
)

// testJob is the least of a job that the data plane needs: subtasks in
// goroutines, the first failure stops them all.
type testJob struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	wg      sync.WaitGroup
	aligned bool
	mu      sync.Mutex
	err     error
}

func newTestJob(aligned bool) *testJob {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &testJob{ctx: ctx, cancel: cancel, aligned: aligned}
}

func (j *testJob) Done() <-chan struct{}    { return j.ctx.Done() }
func (j *testJob) Aligned() bool            { return j.aligned }
func (j *testJob) MaxParallelism() int      { return 128 }
func (j *testJob) LingerFlag() *atomic.Bool { return new(atomic.Bool) }
func (j *testJob) Context() context.Context { return j.ctx }

// Go runs fn as subtask sub of node; a panic or Abort fails the job.
func (j *testJob) Go(node string, sub int, fn func()) {
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				j.Fail(fault.FromPanic(node, sub, r))
			}
		}()
		fn()
	}()
}

// Fail stops the job with err; the first failure wins.
func (j *testJob) Fail(err error) {
	j.mu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.mu.Unlock()
	j.cancel(err)
}

// Wait waits for every subtask and returns the first failure.
func (j *testJob) Wait() error {
	j.wg.Wait()
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}
