package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/stream"
)

func TestJobGoRecoversPanic(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	j.Go("parse", 3, func() { panicInUserCode() })
	err := waitJob(t, j)
	var pe *fault.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Wait = %v (%T), want a *fault.PanicError", err, err)
	}
	if pe.Node != "parse" || pe.Subtask != 3 || pe.Value != "index out of luck" {
		t.Errorf("PanicError{Node: %q, Subtask: %d, Value: %v}, want parse, 3, index out of luck", pe.Node, pe.Subtask, pe.Value)
	}
	// The stack shows where the panic happened, not only where it was
	// recovered.
	if !bytes.Contains(pe.Stack, []byte("panicInUserCode")) {
		t.Errorf("the stack does not name the panicking function:\n%s", pe.Stack)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "parse[3]: panic: index out of luck\n") || !strings.Contains(msg, "panicInUserCode") {
		t.Errorf("message %q, want it to start with parse[3]: panic: index out of luck and carry the stack", msg)
	}
	if j.Context().Err() == nil {
		t.Error("a panic did not cancel the job's context")
	}
}

func panicInUserCode() { panic("index out of luck") }

func TestJobGoRecoversRuntimeError(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	j.Go("map", 0, func() {
		var m map[string]int
		m["x"] = 1
	})
	var pe *fault.PanicError
	if err := waitJob(t, j); !errors.As(err, &pe) || !strings.Contains(err.Error(), "map[0]: panic: assignment to entry in nil map") {
		t.Fatalf("Wait = %v, want map[0]: panic: assignment to entry in nil map", err)
	}
	if _, ok := pe.Value.(error); !ok {
		t.Errorf("the panic value is %T, want the runtime error itself", pe.Value)
	}
}

func TestJobGoRecoversAbort(t *testing.T) {
	errDisk := errors.New("disk full")
	cases := []struct {
		name string
		fn   func()
		want string
	}{
		{"Abort", func() { fault.Abort(errDisk) }, "sink[1]: disk full"},
		{"Abortf", func() { fault.Abortf("write part file: %w", errDisk) }, "sink[1]: write part file: disk full"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := chanJob(config.ExactlyOnce)
			j.Go("sink", 1, tc.fn)
			err := waitJob(t, j)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Wait = %v, want %s", err, tc.want)
			}
			if !errors.Is(err, errDisk) {
				t.Errorf("Wait = %v does not wrap the aborting error", err)
			}
			var pe *fault.PanicError
			if errors.As(err, &pe) {
				t.Errorf("Abort reported as a panic: %v", err)
			}
			if c := context.Cause(j.Context()); c != err {
				t.Errorf("context cause %v, want the failure %v", c, err)
			}
		})
	}
}

func TestJobFirstFailureWins(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	first, second := errors.New("first"), errors.New("second")
	j.Go("a", 0, func() { fault.Abort(first) })
	j.Go("b", 0, func() {
		<-j.Context().Done() // fails after a's failure stopped the job
		fault.Abort(second)
	})
	j.Go("c", 0, func() {
		<-j.Context().Done()
		panic("third")
	})
	err := waitJob(t, j)
	if !errors.Is(err, first) || err.Error() != "a[0]: first" {
		t.Fatalf("Wait = %v, want a[0]: first", err)
	}
	j.Fail(second)
	if err := j.Wait(); !errors.Is(err, first) {
		t.Errorf("after a later Fail, Wait = %v, want the first failure", err)
	}
}

func TestJobFailDirect(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	e1, e2 := errors.New("e1"), errors.New("e2")
	j.Fail(e1)
	j.Fail(e2)
	if err := j.Wait(); err != e1 {
		t.Errorf("Wait = %v, want e1", err)
	}
	if c := context.Cause(j.Context()); c != e1 {
		t.Errorf("context cause %v, want e1", c)
	}
}

func TestJobConcurrentFailures(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	start := make(chan struct{})
	const n = 50
	for i := range n {
		j.Go("op", i, func() {
			<-start
			fault.Abortf("failure %d", i)
		})
	}
	close(start)
	err := waitJob(t, j)
	var sub int
	if err == nil {
		t.Fatal("Wait = nil after every subtask failed")
	}
	if _, scanErr := fmt.Sscanf(err.Error(), "op[%d]: failure", &sub); scanErr != nil || !strings.HasSuffix(err.Error(), fmt.Sprintf("failure %d", sub)) {
		t.Errorf("Wait = %v, want one subtask's failure with its own index", err)
	}
	if c := context.Cause(j.Context()); c != err {
		t.Errorf("context cause %v differs from the reported failure %v", c, err)
	}
}

func TestJobWaitWaitsForAll(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	gate := make(chan struct{})
	var finished atomic.Int32
	const n = 5
	for i := range n {
		j.Go("op", i, func() {
			<-gate
			finished.Add(1)
		})
	}
	waited := make(chan error, 1)
	go func() { waited <- j.Wait() }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v while every subtask was still running", err)
	default:
	}
	close(gate)
	if err := recvWithin(t, "Wait", waited); err != nil {
		t.Fatal(err)
	}
	if got := finished.Load(); got != n {
		t.Errorf("Wait returned when %d of %d subtasks had finished", got, n)
	}
}

func TestJobWaitWaitsForAllAfterFailure(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	gate := make(chan struct{})
	var finished atomic.Bool
	j.Go("slow", 0, func() {
		<-gate // ignores the cancelation, like user code in a long call
		finished.Store(true)
	})
	j.Go("bad", 0, func() { fault.Abortf("bad") })
	<-j.Context().Done()
	waited := make(chan error, 1)
	go func() { waited <- j.Wait() }()
	close(gate)
	if err := recvWithin(t, "Wait", waited); err == nil || err.Error() != "bad[0]: bad" {
		t.Fatalf("Wait = %v, want bad[0]: bad", err)
	}
	if !finished.Load() {
		t.Error("Wait returned before the slow subtask finished")
	}
}

func TestJobWaitNoFailure(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	var ran atomic.Int32
	for i := range 3 {
		j.Go("op", i, func() { ran.Add(1) })
	}
	if err := waitJob(t, j); err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
	if ran.Load() != 3 {
		t.Errorf("%d subtasks ran, want 3", ran.Load())
	}
	if j.Context().Err() != nil {
		t.Error("a successful job canceled its context")
	}
}

func TestJobParentCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	j := New(ctx, &config.Config{Name: "test", MaxParallelism: 128, Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce}}, Options{Log: io.Discard})
	ins := stream.NewInboxes[int](j, 1, 1)
	idle := make(chan struct{}, 1)
	ins[0].OnIdle(func() {
		select {
		case idle <- struct{}{}:
		default:
		}
	})
	j.Go("op", 0, func() { ins[0].Next() })
	recvWithin(t, "the subtask to wait", idle)
	cancel()
	// A stopped job (interrupt) reports why it stopped.
	if err := waitJob(t, j); !errors.Is(err, context.Canceled) && !errors.Is(err, fault.ErrCanceled) {
		t.Fatalf("Wait = %v, want the cancelation", err)
	}
}

// TestJobRun is about the goroutines Run starts and waits for; it runs
// without checkpoints, in an empty working directory.
func TestJobRun(t *testing.T) {
	t.Chdir(t.TempDir())
	j := chanJob(config.NoCheckpoints)
	var ran atomic.Int32
	err := j.Run(func(j *Job) {
		for i := range 4 {
			j.Go("op", i, func() { ran.Add(1) })
		}
	})
	if err != nil || ran.Load() != 4 {
		t.Fatalf("Run = %v with %d subtasks run, want nil and 4", err, ran.Load())
	}

	// Subtasks start only once the build is done: a build that fails
	// starts none of them.
	j = chanJob(config.NoCheckpoints)
	ran.Store(0)
	err = j.Run(func(j *Job) {
		j.Go("op", 0, func() { ran.Add(1) })
		panic("wiring went wrong")
	})
	if err == nil || !strings.HasPrefix(err.Error(), "build[0]: panic: wiring went wrong") {
		t.Fatalf("Run = %v, want build[0]: panic: wiring went wrong", err)
	}
	if ran.Load() != 0 {
		t.Error("a subtask of a failed build ran")
	}
}

func TestJobLogf(t *testing.T) {
	var buf bytes.Buffer
	cfg := &config.Config{Name: "test", Parallelism: 1, MaxParallelism: 128, Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce}}
	j := New(context.Background(), cfg, Options{Log: &buf})
	j.Logf("skipped %d malformed records in %s", 3, "a.csv")
	if got, want := buf.String(), "test: skipped 3 malformed records in a.csv\n"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
}

// chanJob is a job with no nodes, enough for subtasks and channels.
func chanJob(mode string) *Job {
	cfg := &config.Config{Name: "test", Parallelism: 1, MaxParallelism: 128, Checkpoint: config.CheckpointConfig{Mode: mode}}
	return New(context.Background(), cfg, Options{Log: io.Discard})
}

// hangGuard is how long a test waits for something that must happen
// before it calls it a hang; it is never what a test asserts.
const hangGuard = 10 * time.Second

// recvWithin receives from c; the deadline only guards against a hang.
func recvWithin[T any](t testing.TB, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("hang: still waiting for %s after %v", what, hangGuard)
		panic("unreachable")
	}
}

// waitJob returns j.Wait(), failing the test if the job hangs.
func waitJob(t testing.TB, j *Job) error {
	t.Helper()
	c := make(chan error, 1)
	go func() { c <- j.Wait() }()
	return recvWithin(t, "the job's goroutines to finish", c)
}

// TestJobShared checks that the subtasks of a run get one value per key
// (a generator's subtasks keep pace through it), made once even when they
// ask at once, and that another run starts with none.
func TestJobShared(t *testing.T) {
	j := chanJob(config.ExactlyOnce)
	var made atomic.Int32
	mk := func() any { made.Add(1); return new(int) }
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Go(func() { got[i] = j.Shared("pace", mk) })
	}
	wg.Wait()
	for i, v := range got {
		if v != got[0] {
			t.Fatalf("subtask %d got %p, subtask 0 %p: want one value", i, v, got[0])
		}
	}
	if made.Load() != 1 {
		t.Errorf("the value was made %d times, want once", made.Load())
	}
	if other := j.Shared("other", mk); other == got[0] {
		t.Error("another key got the same value")
	}
	if next := chanJob(config.ExactlyOnce).Shared("pace", mk); next == got[0] {
		t.Error("another run got this run's value")
	}
}
