package checkpoint

import (
	"context"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestSourceYields: on one processor a source's Count yields it once
// yieldEvery records have been counted, so that another goroutine (the
// collector's worker) gets a turn while the source's loop never blocks,
// and not before; on two processors it never yields.
func TestSourceYields(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	cfg := &config.Config{Name: "sum", MaxParallelism: 128,
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Interval: time.Second, Timeout: time.Second, Retain: 3, Dir: "/ckpt"},
		Nodes:      []config.NodeConfig{{Name: "src", UID: "src", Kind: "source", Section: "sources", Parallelism: 1}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cp := New(ctx, cfg, Options{FS: vfs.NewMem(), Output: noOutput{}, Logf: t.Logf, Manual: true})
	ctl := cp.NewSourceCtl()
	if !ctl.yields {
		t.Fatal("a source on one processor does not yield")
	}
	const batch = 1024
	for range yieldEvery/batch - 1 {
		ctl.Count(batch)
	}
	if ctl.unyielded != yieldEvery-batch {
		t.Fatalf("the source yielded after %d records, before the yield due at %d", yieldEvery-batch, yieldEvery)
	}
	ctl.Count(batch)
	if ctl.unyielded != 0 {
		t.Fatalf("the source has not yielded after %d records counted on one processor", yieldEvery)
	}
	// A yield gives a runnable goroutine of this processor its turn.
	// Not always the first time: the yield puts the source's goroutine on
	// the scheduler's global queue, which it looks at first once in 61
	// turns, for fairness.
	counted := int64(yieldEvery)
	for attempt := 1; ; attempt++ {
		var ran atomic.Bool
		go ran.Store(true) // runnable on this processor, which only a yield (or a preemption, after 10 ms) gives up
		ctl.Count(yieldEvery)
		counted += yieldEvery
		if ran.Load() {
			break
		}
		if attempt == 10 {
			t.Fatalf("another goroutine did not run in %d yields of a source on one processor", attempt)
		}
	}
	if got := cp.RecordsRead(); got != counted {
		t.Errorf("RecordsRead = %d, want %d", got, counted)
	}

	goruntime.GOMAXPROCS(2)
	if cp.NewSourceCtl().yields {
		t.Error("a source on two processors yields")
	}
}

// BenchmarkSourceCountYield is the cost of the yield a source makes on
// one processor (an op is one yield: yieldEvery records counted at
// once), with nothing else to run:
//
//	go test -run '^$' -bench SourceCountYield ./runtime/internal/checkpoint/
func BenchmarkSourceCountYield(b *testing.B) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	ctl := &SourceCtl{yields: true}
	for b.Loop() {
		ctl.Count(yieldEvery)
	}
}
