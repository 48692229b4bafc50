package checkpoint

import (
	"context"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// noOutput is a job without transactional sinks.
type noOutput struct{}

func (noOutput) Commit(*storage.Manifest) error { return nil }
func (noOutput) Clean(*storage.Manifest) error  { return nil }

// TestManual: under a test driver (Options.Manual) the coordinator takes
// a checkpoint when Trigger asks, not on its interval, reports its
// completion to Completed, refuses a second one while the first is under
// way, and the tasks read the driver's clock.
func TestManual(t *testing.T) {
	cfg := &config.Config{Name: "sum", MaxParallelism: 128,
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Interval: time.Millisecond, Timeout: time.Millisecond, Retain: 3, Dir: "/ckpt"},
		Nodes:      []config.NodeConfig{{Name: "src", UID: "src", Kind: "source", Section: "sources", Parallelism: 1}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	completed := make(chan int64, 4)
	cp := New(ctx, cfg, Options{FS: vfs.NewMem(), Output: noOutput{}, Logf: t.Logf, Manual: true,
		Completed: func(id int64, err error) {
			if err != nil {
				t.Errorf("checkpoint %d: %v", id, err)
			}
			completed <- id
		},
		Now: func() int64 { return 42 }})
	if err := cp.Recover("", false, true); err != nil {
		t.Fatal(err)
	}
	ctl := cp.NewSourceCtl()
	task := cp.Task(0, 0)
	if got := task.NowMillis(); got != 42 {
		t.Errorf("the task's clock reads %d, want the driver's 42", got)
	}
	cp.Start(func(fn func()) { go fn() })
	// An interval of 1ms would have triggered many by now.
	time.Sleep(20 * time.Millisecond)
	if id := ctl.Poll(); id != 0 {
		t.Fatalf("the coordinator triggered checkpoint %d on its interval", id)
	}
	id := cp.Trigger()
	if id != 1 {
		t.Fatalf("Trigger = %d, want 1", id)
	}
	if again := cp.Trigger(); again != 0 {
		t.Errorf("a second Trigger while checkpoint 1 is under way started %d", again)
	}
	if got := ctl.Poll(); got != id {
		t.Fatalf("the source polls %d, want %d", got, id)
	}
	// The timeout of 1ms does not give it up: the driver waits.
	time.Sleep(20 * time.Millisecond)
	task.Submit(task.Begin(id))
	if got := <-completed; got != id {
		t.Fatalf("completed %d, want %d", got, id)
	}
	if got := cp.Committed(); got != id {
		t.Errorf("committed %d, want %d", got, id)
	}
	if next := cp.Trigger(); next != 2 {
		t.Errorf("Trigger after the first completed = %d, want 2", next)
	}
}
