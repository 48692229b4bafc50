package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestPrune checks which checkpoint folders prune removes: complete ones
// beyond the newest retain, and incomplete ones older than the newest
// complete one.
func TestPrune(t *testing.T) {
	cases := []struct {
		retain   int
		complete []int64
		folders  []int64
		underway int64
		want     []int64
	}{
		{2, []int64{1, 2, 4, 6, 7}, []int64{1, 2, 3, 4, 5, 6, 7, 8}, 8, []int64{6, 7, 8}},
		{1, []int64{1, 2, 4, 6, 7}, []int64{1, 2, 3, 4, 5, 6, 7, 8}, 0, []int64{7, 8}},
		{3, []int64{2, 5}, []int64{1, 2, 3, 4, 5}, 0, []int64{2, 5}},
		{3, nil, []int64{1, 2}, 3, []int64{1, 2}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.retain, c.complete, c.folders), func(t *testing.T) {
			mem := vfs.NewMem()
			st := &storage.Storage{FS: mem, Dir: "/ckpt"}
			for _, id := range c.folders {
				if err := st.Prepare(id); err != nil {
					t.Fatal(err)
				}
				if slices.Contains(c.complete, id) {
					if err := st.Commit(&storage.Manifest{ID: id, Job: "sum", MaxParallelism: 128}); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg := &config.Config{Name: "sum", MaxParallelism: 128, Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Retain: c.retain, Dir: "/ckpt"}}
			cp := New(context.Background(), cfg, Options{FS: mem, Logf: t.Logf})
			co := newCoordinator(cp, 9)
			if c.underway != 0 {
				co.cur = &inflight{id: c.underway}
			}
			co.prune()
			entries, err := st.List()
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, e := range entries {
				got = append(got, e.ID)
				if e.Complete != slices.Contains(c.complete, e.ID) {
					t.Errorf("checkpoint %d: complete %v", e.ID, e.Complete)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("left %v, want %v", got, c.want)
			}
		})
	}
}

// TestFailedCheckpointRemoved: the files of a checkpoint given up (a
// writer failed, as on a full disk) do not stay behind until the next
// checkpoint completes: its folder is removed at once.
func TestFailedCheckpointRemoved(t *testing.T) {
	mem := vfs.NewMem()
	cfg := &config.Config{Name: "sum", MaxParallelism: 128, Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Retain: 3, Dir: "/ckpt"}}
	cp := New(context.Background(), cfg, Options{FS: mem, Logf: t.Logf})
	co := newCoordinator(cp, 1)
	co.trigger(time.Now())
	partial := cp.st.Path(1, "counts-0.state")
	if err := vfs.WriteFileSync(mem, partial, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	co.receive(ack{id: 1, err: errors.New("no space left on device")})
	if _, err := mem.Stat(cp.st.Path(1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder of the failed checkpoint is still there: %v", err)
	}
}
