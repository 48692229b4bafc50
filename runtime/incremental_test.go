package runtime

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/connector/generator"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestIncrementalCheckpoints fills the state of "sum" with 32766 keys,
// then changes 200 of them: the checkpoint after the fill writes every
// key, the next ones only deltas on top of it. One of them fails: the
// next delta holds its changes too. The run keeps 2 checkpoints: at its
// end the shared folder holds exactly the files of those, nothing of the
// failed or pruned ones. A restart from the delta at another parallelism
// (the key groups move) writes the output exactly once.
func TestIncrementalCheckpoints(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testIncrementalCheckpoints(t, backend) })
	}
}

func testIncrementalCheckpoints(t *testing.T, backend string) {
	// fill is where the generator's growing blocks end at parallelism 2
	// (1, 2, ..., MaxBlock/2 numbers each): every source subtask's
	// first fill/2 records are its share of the numbers below fill.
	const fill, hot = 2 * (generator.MaxBlock - 1), 200
	mem := vfs.NewMem()
	failing := "-000002.state"
	if backend == "pebble" {
		failing = "chk-000002/sum-0-MANIFEST"
	}
	o := &sumJob{p: 2, n: 2 * fill, interval: time.Millisecond, retain: 2, backend: backend,
		keyFn: func(seq uint64) int64 {
			if seq < fill {
				return int64(seq)
			}
			return int64(seq % hot)
		},
		// Per source subtask: records 0..fill/2-1 fill, then updates.
		// Checkpoint 1 comes after the fill, 2 (which fails) and 3 in the
		// updates.
		holdPolls: fill / 2,
		pauses:    []uint64{fill / 2, fill/2 + 2500, fill/2 + 5000},
		fs:        vfs.NewErrorFS(mem, vfs.OnceAt(vfs.OpWrite, failing, nil)),
	}
	o.hook = func(c *sumSource, i uint64) {
		if i == fill/2+5001 {
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
	// A slow machine may take more checkpoints between the pauses: the
	// one kept is 3 or a later one.
	if len(ms) != 2 || final == 0 || delta < 3 {
		t.Fatalf("checkpoints %v, want one of 3 and later and the final one\nlog:\n%s", ms, r.log)
	}
	m := ms[delta]
	if m.Stats.BytesWritten*20 > m.Stats.StateSize {
		t.Errorf("checkpoint %d wrote %d bytes of a state of %d: more than 5%%", delta, m.Stats.BytesWritten, m.Stats.StateSize)
	}
	checkNoStrayFiles(t, mem, sumCkptDir)
	if backend == "memory" {
		checkMemoryFiles(t, mem, m)
	} else {
		checkPebbleFiles(t, m)
	}

	// Resume from the delta, with 3 subtasks: every one reads the key
	// groups it owns from the files of the 2 old ones.
	o.from = filepath.Join(sumCkptDir, storage.FolderName(delta))
	o.fs, o.sumP = mem, 3
	r = o.mustRun(t)
	if r.restoredID() != delta {
		t.Errorf("resumed from checkpoint %d, want %d", r.restoredID(), delta)
	}
	o.checkOutput(t, mem)
	checkNoStrayFiles(t, mem, sumCkptDir)
}

// checkPebbleFiles checks the files of a checkpoint of the pebble
// backend, taken after one that completed and one that failed: each
// subtask's store holds sstables written by the first checkpoint (shared,
// not written again) and by this one.
func checkPebbleFiles(t *testing.T, m *storage.Manifest) {
	t.Helper()
	bySub := map[int]int{}
	for _, f := range m.Node("sum").Files {
		if f.Kind != storage.KindPebble || f.Store == "" {
			t.Errorf("%s is of kind %q with store name %q", f.Name, f.Kind, f.Store)
		}
		if strings.HasSuffix(f.Store, ".sst") {
			if !f.Shared {
				t.Errorf("%s is not shared", f.Name)
			}
			bySub[f.Subtask]++
		}
	}
	for sub := range 2 {
		if bySub[sub] < 2 {
			t.Errorf("the store of subtask %d has %d sstables, want the first checkpoint's and this one's", sub, bySub[sub])
		}
	}
}

// checkMemoryFiles checks the files of a checkpoint of the memory
// backend, taken after one that completed and one that failed: for each
// subtask the first checkpoint's full file and a delta of this one.
func checkMemoryFiles(t *testing.T, mem vfs.FS, m *storage.Manifest) {
	t.Helper()
	files := m.Node("sum").Files
	var base, deltas int64
	bySub := map[int][]storage.StateFile{}
	for _, f := range files {
		if !f.Shared {
			t.Errorf("%s is not shared", f.Name)
		}
		bySub[f.Subtask] = append(bySub[f.Subtask], f)
	}
	for sub := range 2 {
		fs := bySub[sub]
		if len(fs) < 2 {
			t.Fatalf("checkpoint %d has state files %+v of subtask %d, want a full one of checkpoint 1 and deltas", m.ID, fs, sub)
		}
		if fs[0].Name != fmt.Sprintf("sum-%d-000001.state", sub) || fs[0].Kind != "" {
			t.Errorf("subtask %d: the first file is %s of kind %q, want checkpoint 1's full one", sub, fs[0].Name, fs[0].Kind)
		}
		base += fs[0].Size
		// The keys the subtask held, which a restore makes its index
		// for: a full file's are its entries.
		if fs[0].Keys != fs[0].Entries || fs[0].Keys == 0 {
			t.Errorf("subtask %d: the full file %s says it holds %d keys in %d entries", sub, fs[0].Name, fs[0].Keys, fs[0].Entries)
		}
		for _, f := range fs[1:] {
			if f.Keys < fs[0].Keys {
				t.Errorf("subtask %d: the delta %s says the state held %d keys, fewer than its full file's %d (the job only adds keys)", sub, f.Name, f.Keys, fs[0].Keys)
			}
			if f.Kind != storage.KindDelta || f.Name == fmt.Sprintf("sum-%d-000002.state", sub) {
				t.Errorf("subtask %d: %s of kind %q, want deltas of checkpoints that completed", sub, f.Name, f.Kind)
			}
			deltas += f.Size
		}
	}
	if m.Stats.StateSize != base+deltas {
		t.Errorf("checkpoint %d: state %d; want the full files' %d and the deltas' %d", m.ID, m.Stats.StateSize, base, deltas)
	}
	if n, _ := mem.ReadDir(filepath.Join(sumCkptDir, storage.SharedDir)); len(n) != len(files) {
		t.Errorf("the shared folder holds %d files, want the %d of checkpoint %d", len(n), len(files), m.ID)
	}
}
