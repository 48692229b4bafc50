package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// epochState is a Changes whose snapshots are counted by the test.
type epochState struct{ epoch uint64 }

func (e *epochState) Epoch() uint64   { return e.epoch }
func (e *epochState) Track()          {}
func (e *epochState) EndChain() error { return nil }

// TestCaptureChangesEncodesInWriter: state captured with CaptureChanges
// is encoded by the writer, not at the barrier; the chain goes on from
// the epoch the capture ended; an error of the encoder fails the write,
// naming the subtask.
func TestCaptureChangesEncodesInWriter(t *testing.T) {
	cfg := &config.Config{Name: "win", MaxParallelism: 8, Nodes: []config.NodeConfig{{Name: "win", UID: "win", Parallelism: 1}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt"}}
	cp := New(context.Background(), cfg, Options{FS: vfs.NewMem(), Logf: t.Logf})
	task := cp.Task(0, 0)
	st := &epochState{epoch: 7}
	for _, fail := range []bool{false, true} {
		id := int64(1)
		if fail {
			id = 2
		}
		if err := cp.st.Prepare(id); err != nil {
			t.Fatal(err)
		}
		s := task.Begin(id)
		encoded := false
		CaptureChanges(s, 0, "", func(k int) uint64 { return uint64(k) }, "int", "int", st, func(d state.Delta) (uint64, func(*state.Sections, func(int) int) error, error) {
			if !d.Full {
				t.Errorf("checkpoint %d: the first snapshot of the state is a delta", id)
			}
			e := st.epoch
			st.epoch++
			return e, func(sec *state.Sections, kg func(int) int) error {
				encoded = true
				if fail {
					return errors.New("the encoder fails")
				}
				sec.W[kg(3)-sec.Start].Varint(3)
				return nil
			}, nil
		})
		if encoded || s.err != nil {
			t.Fatalf("checkpoint %d: encoded at the barrier (%v), error %v", id, encoded, s.err)
		}
		a := cp.write(s)
		if !encoded {
			t.Fatalf("checkpoint %d: the writer did not encode the capture", id)
		}
		if fail {
			if a.err == nil || !strings.Contains(a.err.Error(), "win[0]: the encoder fails") {
				t.Errorf("checkpoint %d: error %v, want win[0]'s encoder's", id, a.err)
			}
			continue
		}
		if a.err != nil || len(a.nodes) != 1 || len(a.nodes[0].Files) != 1 || a.bytes == 0 {
			t.Fatalf("checkpoint %d: error %v, wrote %d bytes, nodes %+v", id, a.err, a.bytes, a.nodes)
		}
		if l, ok := task.chain(0, "").get(id); !ok || l.epoch != 7 {
			t.Errorf("checkpoint %d: chain link %+v (%v), want epoch 7", id, l, ok)
		}
	}
}

// TestNoDeltaOnSavepoint: a savepoint's capture is asked for the
// canonical form, and no later delta builds on its file (sliding windows
// kept in slices write whole windows there, under which a delta of
// slices would count records twice); a checkpoint's file is built on.
func TestNoDeltaOnSavepoint(t *testing.T) {
	cfg := &config.Config{Name: "win", MaxParallelism: 8, Nodes: []config.NodeConfig{{Name: "win", UID: "win", Parallelism: 1}},
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt"}}
	cp := New(context.Background(), cfg, Options{FS: vfs.NewMem(), Logf: t.Logf})
	task := cp.Task(0, 0)
	st := &epochState{epoch: 1}
	for _, c := range []struct {
		id        int64
		savepoint bool
	}{{1, false}, {2, true}} {
		id, savepoint := c.id, c.savepoint
		if savepoint {
			cp.savepointID.Store(id)
		}
		if err := cp.st.Prepare(id); err != nil {
			t.Fatal(err)
		}
		s := task.Begin(id)
		CaptureChanges(s, 0, "", func(k int) uint64 { return uint64(k) }, "int", "int", st, func(d state.Delta) (uint64, func(*state.Sections, func(int) int) error, error) {
			if d.Canonical != savepoint || !d.Full {
				t.Errorf("checkpoint %d (savepoint %v): asked for %+v", id, savepoint, d)
			}
			e := st.epoch
			st.epoch++
			return e, func(sec *state.Sections, kg func(int) int) error { return nil }, nil
		})
		if a := cp.write(s); a.err != nil {
			t.Fatal(a.err)
		}
		if _, ok := task.chain(0, "").get(id); ok == savepoint {
			t.Errorf("checkpoint %d (savepoint %v): a later delta may build on it: %v", id, savepoint, ok)
		}
	}
}

// TestSectionBuffersReused checks that a state's sections are encoded
// into the buffers of its last snapshot where those have the room its
// hint asks (and not more than twice it), and into new ones where they
// have not or there is no hint.
func TestSectionBuffersReused(t *testing.T) {
	var b sectionBuffers
	hint := []int{1000, 0, 1000}
	first := b.sections(10, 13, hint)
	if first.Start != 10 || len(first.W) != 3 {
		t.Fatalf("sections of key groups %d..%d, want 10..12", first.Start, first.Start+len(first.W)-1)
	}
	bufs := make([][]byte, 3)
	for i := range first.W {
		first.W[i].Uvarint(uint64(i))
		bufs[i] = first.W[i].Bytes()
	}
	b.give(bufs)
	second := b.sections(10, 13, []int{1000, 0, 5000})
	data := func(s *state.Sections, i int) *byte { return &s.W[i].Bytes()[:1][0] }
	if data(second, 0) != &bufs[0][0] {
		t.Error("section 0 got a new buffer where the last one had the room")
	}
	if second.W[1].Room() != 0 {
		t.Errorf("section 1, without a hint, has %d bytes of room, want none (the state sizes it)", second.W[1].Room())
	}
	if data(second, 2) == &bufs[2][0] || second.W[2].Room() < 5000 {
		t.Errorf("section 2 has %d bytes of room, want a new buffer of 5000 or more", second.W[2].Room())
	}
	if second.W[0].Len() != 0 {
		t.Errorf("a reused buffer holds %d bytes, want it empty", second.W[0].Len())
	}
	if third := b.sections(10, 13, hint); third.W[0].Room() == 0 || data(third, 0) == &bufs[0][0] {
		t.Error("the buffers were taken twice: a snapshot taken while another's are in use must get its own")
	}
	// A state that shrank: a buffer of more than twice the room asked
	// is dropped, not kept for good.
	b.give([][]byte{make([]byte, 1, 100_000), make([]byte, 1, 2200)})
	small := b.sections(10, 12, []int{1000, 1000})
	if r := small.W[0].Room(); r >= 100_000 || r < 1000 {
		t.Errorf("section 0 has %d bytes of room: the spare of 100000 was reused for a hint of 1000, or nothing was made", r)
	}
	if r := small.W[1].Room(); r != 2200 {
		t.Errorf("section 1 has %d bytes of room, want the spare's 2200 (under twice the room asked)", r)
	}
}
