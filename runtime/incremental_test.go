package runtime

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestIncrementalCheckpoints fills the state of "sum" with 4000 keys,
// then changes 1% of them: the checkpoint after the fill writes every
// key, the next ones only deltas on top of it. One of them fails: the
// next delta holds its changes too. The run keeps 2 checkpoints: at its
// end the shared folder holds exactly the files of those, nothing of the
// failed or pruned ones. A restart from the delta at another parallelism
// (the key groups move) writes the output exactly once.
func TestIncrementalCheckpoints(t *testing.T) {
	const fill, hot = 4000, 40
	mem := vfs.NewMem()
	o := &sumJob{p: 2, n: 2 * fill, interval: time.Millisecond, retain: 2,
		keyFn: func(seq uint64) int64 {
			if seq < fill {
				return int64(seq)
			}
			return int64(seq % hot)
		},
		// Per source subtask: records 0..1999 fill, then 2000 updates.
		// Checkpoint 1 comes after the fill, 2 (which fails) and 3 in the
		// updates.
		holdPolls: fill / 2,
		pauses:    []uint64{fill / 2, fill/2 + 500, fill/2 + 1000},
		fs:        vfs.NewErrorFS(mem, vfs.OnceAt(vfs.OpWrite, "-000002.state", nil)),
	}
	o.hook = func(c *sumSource, i uint64) {
		if i == fill/2+1001 {
			// Checkpoint 3 completes before the input ends.
			c.awaitCommitted(3)
		}
	}
	r := o.mustRun(t)
	o.checkOutput(t, mem)
	if !strings.Contains(r.log.String(), "checkpoint 2 failed and is given up") {
		t.Errorf("checkpoint 2 did not fail:\n%s", r.log)
	}
	ms := checkpoints(t, mem)
	var delta, final int64
	for id, m := range ms {
		if m == nil {
			t.Fatalf("checkpoint %d is incomplete", id)
		}
		if m.Final {
			final = id
		} else {
			delta = id
		}
	}
	if len(ms) != 2 || final == 0 || delta != 3 {
		t.Fatalf("checkpoints %v, want 3 and the final one\nlog:\n%s", ms, r.log)
	}
	m := ms[delta]
	files := m.Node("sum").Files
	if len(files) != 4 {
		t.Fatalf("checkpoint 3 has state files %+v, want a full one of checkpoint 1 and a delta of 3 for each subtask", files)
	}
	var base int64
	for _, f := range files {
		if !f.Shared {
			t.Errorf("%s is not shared", f.Name)
		}
		switch f.Name {
		case fmt.Sprintf("sum-%d-000001.state", f.Subtask):
			if f.Kind != "" {
				t.Errorf("%s is of kind %q, want a full file", f.Name, f.Kind)
			}
			base += f.Size
		case fmt.Sprintf("sum-%d-000003.state", f.Subtask):
			if f.Kind != storage.KindDelta {
				t.Errorf("%s is of kind %q, want a delta", f.Name, f.Kind)
			}
		default:
			t.Errorf("unexpected state file %s", f.Name)
		}
	}
	if m.Stats.BytesWritten > base/20 || m.Stats.StateSize != base+m.Stats.BytesWritten {
		t.Errorf("checkpoint 3 wrote %d bytes, state %d; want under 5%% of the full files' %d", m.Stats.BytesWritten, m.Stats.StateSize, base)
	}
	checkNoStrayFiles(t, mem, sumCkptDir)
	if n, _ := mem.ReadDir(filepath.Join(sumCkptDir, storage.SharedDir)); len(n) != 4 {
		t.Errorf("the shared folder holds %d files, want the 4 of checkpoint 3", len(n))
	}

	// Resume from the delta, with 3 subtasks: every one reads the key
	// groups it owns from the full files and the deltas.
	o.from = filepath.Join(sumCkptDir, storage.FolderName(delta))
	o.fs, o.sumP = mem, 3
	r = o.mustRun(t)
	if r.restoredID() != delta {
		t.Errorf("resumed from checkpoint %d, want %d", r.restoredID(), delta)
	}
	o.checkOutput(t, mem)
	checkNoStrayFiles(t, mem, sumCkptDir)
}
