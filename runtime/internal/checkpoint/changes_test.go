package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/pages"
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
// into one arena outside the heap, the room its hint asks for each, and
// that the next snapshot reuses it once the last one gave it back: not
// while that one holds it (the sections then go in the heap), nor when
// it is too small or more than about twice what the hint asks (a new
// arena, the old one unmapped).
func TestSectionBuffersReused(t *testing.T) {
	mapped := pages.Mapped()
	var b sectionBuffers
	in := func(s *state.Sections, i int, l *sectionLease) bool {
		if l == nil || l.arena == nil {
			return false
		}
		p := uintptr(unsafe.Pointer(&s.W[i].Bytes()[:1][0]))
		a := uintptr(unsafe.Pointer(unsafe.SliceData(l.arena.Bytes())))
		return p >= a && p < a+uintptr(l.arena.Len())
	}
	hint := []int{1000, 0, 1000}
	first, l1 := b.sections(10, 13, hint)
	if first.Start != 10 || len(first.W) != 3 {
		t.Fatalf("sections of key groups %d..%d, want 10..12", first.Start, first.Start+len(first.W)-1)
	}
	if !in(first, 0, l1) || !in(first, 2, l1) || first.W[0].Room() < 1000 || first.W[2].Room() < 1000 {
		t.Fatalf("sections 0 and 2 have %d and %d bytes of room, want 1000 or more in the arena", first.W[0].Room(), first.W[2].Room())
	}
	if first.W[1].Room() != 0 {
		t.Errorf("section 1, without a hint, has %d bytes of room, want none (the state sizes it)", first.W[1].Room())
	}
	if got := pages.Mapped() - mapped; got < 2000 || got > 64<<10 {
		t.Errorf("%d bytes mapped for two sections of 1000", got)
	}
	// A section that outgrows its room moves to the heap, and the next
	// section's bytes in the arena stay as they were.
	first.W[2].Uvarint(7)
	for range first.W[0].Room() + 10 {
		first.W[0].Uvarint(1)
	}
	if got := first.W[2].Bytes(); len(got) != 1 || got[0] != 7 {
		t.Errorf("section 2 holds %v after section 0 outgrew its room, want [7]", got)
	}
	arena := l1.arena
	// The arena is held: another snapshot meanwhile gets the heap.
	other, l2 := b.sections(10, 13, hint)
	if l2 != nil || other.W[0].Room() < 1000 {
		t.Errorf("a snapshot taken while another holds the arena got a lease (%v) or %d bytes of room", l2 != nil, other.W[0].Room())
	}
	l1.done()
	l1.done() // twice is once
	l2.done() // nil: nothing
	second, l3 := b.sections(10, 13, hint)
	if l3 == nil || l3.arena != arena || !in(second, 0, l3) || second.W[0].Len() != 0 {
		t.Fatal("the arena given back was not reused, or its sections are not empty")
	}
	l3.done()
	// Too small for the next hint, or more than about twice it: a new
	// arena of the size asked (the system may map it where the old one
	// was: the bytes mapped tell).
	for _, h := range [][]int{{50_000, 50_000}, {1000, 1000}} {
		s, l := b.sections(10, 12, h)
		if l == nil || !in(s, 0, l) || !in(s, 1, l) || s.W[1].Room() < h[1] {
			t.Errorf("hint %v: the sections are not in the arena", h)
		}
		if got, want := pages.Mapped()-mapped, int64(state.SectionRoom(h[0])*2); got < want || got > 2*want+2*pages.Size {
			t.Errorf("hint %v: %d bytes mapped, want about %d: the arena was kept, or the old one not unmapped", h, got, want)
		}
		l.done()
	}
}
