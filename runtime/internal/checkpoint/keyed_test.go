package checkpoint

import (
	"context"
	"errors"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// TestSnapshotKeyedEncoderFails: a value the generated encoder refuses (a
// cycle: it fails its codec.Writer) fails the subtask's snapshot with the
// writer's error and the node's name, and nothing of the state is kept.
func TestSnapshotKeyedEncoderFails(t *testing.T) {
	cfg := &config.Config{Name: "sum", MaxParallelism: 8, Nodes: []config.NodeConfig{{Name: "sum", Parallelism: 1}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt"}}
	cp := New(context.Background(), cfg, Options{FS: vfs.NewMem(), Logf: t.Logf})
	s := cp.Task(0, 0).Begin(1)
	SnapshotKeyed(s, 0, "", func(k int) uint64 { return uint64(k) }, "int", "list.Node", func(sec *state.Sections, keyGroup func(int) int) error {
		w := &sec.W[keyGroup(3)-sec.Start]
		for w.Enter("list.Node") { // the encoder of a list that is its own Next
		}
		return nil
	})
	if !errors.Is(s.err, codec.ErrTooDeep) || !strings.HasPrefix(s.err.Error(), "sum[0]: ") || !strings.Contains(s.err.Error(), "list.Node") {
		t.Errorf("snapshot error %v, want codec.ErrTooDeep for sum[0] naming list.Node", s.err)
	}
	if len(s.keyed) != 0 {
		t.Errorf("the snapshot kept %d keyed states", len(s.keyed))
	}
}

// TestRunRestores: the restores of every subtask run, those of one
// subtask in order, and the first failure is returned naming its subtask.
func TestRunRestores(t *testing.T) {
	cfg := &config.Config{Name: "sum", MaxParallelism: 8, Nodes: []config.NodeConfig{{Name: "sum", Parallelism: 4}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt"}}
	cp := New(context.Background(), cfg, Options{FS: vfs.NewMem(), Logf: t.Logf})
	var mu sync.Mutex
	ran := map[int][]int{}
	for sub := range 4 {
		task := cp.Task(0, sub)
		for step := range 3 {
			task.restores = append(task.restores, func() {
				mu.Lock()
				ran[sub] = append(ran[sub], step)
				mu.Unlock()
				if sub == 2 && step == 1 {
					fault.Abortf("restore sum: key group 5: bad varint")
				}
			})
		}
	}
	err := cp.RunRestores()
	if err == nil || err.Error() != "sum[2]: restore sum: key group 5: bad varint" {
		t.Errorf("RunRestores = %v", err)
	}
	for sub := range 4 {
		want := []int{0, 1, 2}
		if sub == 2 {
			want = want[:2]
		}
		if !slices.Equal(ran[sub], want) {
			t.Errorf("subtask %d ran restores %v, want %v", sub, ran[sub], want)
		}
	}
}

// TestRunRestoresGC: the garbage collector is off while restores that
// keep what they decode run (the memory backend's), on at GOGC 400 at
// most when one drops it (OnRestore: a pebble store's), and as it was
// once they are over.
func TestRunRestoresGC(t *testing.T) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Skip("GOMEMLIMIT is set: the garbage collector is off during every restore")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	gogc := func() int {
		old := debug.SetGCPercent(-1)
		debug.SetGCPercent(old)
		return old
	}
	for _, dropping := range []bool{false, true} {
		cfg := &config.Config{Name: "sum", MaxParallelism: 8, Nodes: []config.NodeConfig{{Name: "sum", Parallelism: 2}},
			Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt"}}
		cp := New(context.Background(), cfg, Options{FS: vfs.NewMem(), Logf: t.Logf})
		var during []int
		var mu sync.Mutex
		for sub := range 2 {
			task := cp.Task(0, sub)
			restore := func() {
				mu.Lock()
				during = append(during, gogc())
				mu.Unlock()
			}
			if dropping && sub == 1 {
				task.OnRestore(restore)
			} else {
				task.restores = append(task.restores, restore)
			}
		}
		if err := cp.RunRestores(); err != nil {
			t.Fatal(err)
		}
		want := -1
		if dropping {
			want = 400
		}
		if len(during) != 2 || during[0] != want || during[1] != want {
			t.Errorf("with a restore that drops what it decodes %v: GOGC %v during the restores, want %d", dropping, during, want)
		}
		if got := gogc(); got != 100 {
			t.Errorf("GOGC %d after the restores, want 100 as before", got)
		}
	}
}

// TestRestoredKeys: a restore makes room for the keys of its key groups
// that the files hold, in proportion when a chain holds more key groups
// (a lower parallelism wrote it): what the newest file of each chain
// says its subtask held, or else the entries of its files, full files
// and deltas (which may add keys); files that say neither add nothing.
func TestRestoredKeys(t *testing.T) {
	files := []storage.StateFile{
		{KeyGroups: [2]int{0, 64}, Entries: 6400},
		{KeyGroups: [2]int{64, 128}, Entries: 1000},
		{KeyGroups: [2]int{0, 64}, Entries: 50, Kind: storage.KindDelta},
		{KeyGroups: [2]int{0, 64}},
	}
	for _, c := range []struct{ start, end, want int }{
		{0, 64, 6400 + 50},
		{0, 32, 3200 + 25},
		{48, 80, 1612 + 250},
		{128, 256, 0},
	} {
		if got := restoredKeys(files, c.start, c.end); got != c.want {
			t.Errorf("key groups [%d, %d): %d keys, want %d", c.start, c.end, got, c.want)
		}
	}
	// Chains that say how many keys they held: subtask 0's deltas only
	// changed values, subtask 1's added keys and then deleted some; a
	// delta that does not say (written before Keys was) adds its
	// entries to what the file before it said.
	files = []storage.StateFile{
		{Subtask: 0, KeyGroups: [2]int{0, 64}, Entries: 6400, Keys: 6400},
		{Subtask: 0, KeyGroups: [2]int{0, 64}, Entries: 640, Keys: 6400, Kind: storage.KindDelta},
		{Subtask: 0, KeyGroups: [2]int{0, 64}, Entries: 640, Keys: 6400, Kind: storage.KindDelta},
		{Subtask: 1, KeyGroups: [2]int{64, 128}, Entries: 1000, Keys: 1000},
		{Subtask: 1, KeyGroups: [2]int{64, 128}, Entries: 600, Keys: 1600, Kind: storage.KindDelta},
		{Subtask: 1, KeyGroups: [2]int{64, 128}, Entries: 400, Keys: 1200, Kind: storage.KindDelta},
		{Subtask: 2, KeyGroups: [2]int{128, 192}, Entries: 800, Keys: 800},
		{Subtask: 2, KeyGroups: [2]int{128, 192}, Entries: 80, Kind: storage.KindDelta},
	}
	for _, c := range []struct{ start, end, want int }{
		{0, 64, 6400},
		{64, 128, 1200},
		{32, 96, 3200 + 600},
		{128, 192, 880},
	} {
		if got := restoredKeys(files, c.start, c.end); got != c.want {
			t.Errorf("chains that say their keys, key groups [%d, %d): %d keys, want %d", c.start, c.end, got, c.want)
		}
	}
}

// TestSnapshotKeyedReusesBuffers: a state written whole at each
// checkpoint encodes into the buffers of its last snapshot once the
// writer has written them, never into those of a snapshot still to be
// written, and writes the same bytes as into new buffers.
func TestSnapshotKeyedReusesBuffers(t *testing.T) {
	cfg := &config.Config{Name: "sessions", MaxParallelism: 8, Nodes: []config.NodeConfig{{Name: "sessions", UID: "sessions", Parallelism: 1}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt", Retain: 10}}
	cp := New(context.Background(), cfg, Options{FS: vfs.NewMem(), Output: nopOutput{}, Logf: t.Logf})
	task := cp.Task(0, 0)
	snapshot := func(id int64) *Snapshot {
		if err := cp.st.Prepare(id); err != nil {
			t.Fatal(err)
		}
		s := task.Begin(id)
		SnapshotKeyed(s, 0, "", func(k int) uint64 { return uint64(k) * 0x9e3779b97f4a7c15 }, "int", "session", func(sec *state.Sections, keyGroup func(int) int) error {
			for k := range 2000 {
				w := &sec.W[keyGroup(k)-sec.Start]
				w.Uvarint(uint64(k))
				w.String("a session's accumulator, some forty bytes")
			}
			return nil
		})
		if s.err != nil || len(s.keyed) != 1 {
			t.Fatalf("snapshot %d: %v, %d keyed states", id, s.err, len(s.keyed))
		}
		return s
	}
	data := func(s *Snapshot) []*byte {
		var p []*byte
		for _, b := range s.keyed[0].sections {
			p = append(p, &b[:1][0])
		}
		return p
	}
	first := snapshot(1)
	second := snapshot(2) // before the first is written
	for i, p := range data(second) {
		if p == data(first)[i] {
			t.Fatalf("section %d of snapshot 2 is snapshot 1's buffer, which the writer has not written yet", i)
		}
	}
	if a := cp.write(first); a.err != nil {
		t.Fatal(a.err)
	}
	third := snapshot(3)
	for i, p := range data(third) {
		if p != data(first)[i] {
			t.Errorf("section %d of snapshot 3 is a new buffer, not snapshot 1's, which was written", i)
		}
	}
	for i := range third.keyed[0].sections {
		if got, want := third.keyed[0].sections[i], second.keyed[0].sections[i]; !slices.Equal(got, want) {
			t.Fatalf("section %d: %d bytes in the reused buffer, %d in a new one, not the same", i, len(got), len(want))
		}
	}
}
