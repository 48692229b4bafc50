package checkpoint

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/state"
)

// Changes is keyed state held in memory that writes itself into key-group
// sections, whole or as a delta of what changed since an earlier
// checkpoint: the timers of a process operator and the tumbling and
// sliding windows of a window operator (the event-time engines'
// TimerService and WindowState).
type Changes interface {
	// Epoch is the epoch the next snapshot ends.
	Epoch() uint64
	// Track makes the state list its changes: a delta may build on the
	// files it was restored from.
	Track()
	// EndChain ends the files of one subtask of the checkpoint being
	// restored (its full file and the deltas on top of it).
	EndChain() error
}

// SnapshotChanges captures keyed state that writes what changed
// (Changes). At the barrier, write encodes into sections either every
// entry or, when the newest completed checkpoint holds this state of the
// subtask, the entries changed since (a delta), and ends the state's
// epoch; the writer writes the sections into the shared folder, where
// later checkpoints refer to them. What is encoded at the barrier is thus
// what changed, not the whole state. The chain of files is bounded as
// for state.Memory (SnapshotMemory): a full file is written again when
// the deltas have grown as large as it, after maxChain files, and for a
// savepoint (canonical form).
func SnapshotChanges[K comparable](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, st Changes,
	write func(sec *state.Sections, keyGroup func(K) int, d state.Delta) (uint64, error)) {
	kg := keyGroupOf(s.task, hash)
	snapshotChanges(s, node, name, keySchema, valueSchema, st, false, func(d state.Delta) (uint64, func(*state.Sections) (uint64, error), error) {
		return 0, func(sec *state.Sections) (uint64, error) { return write(sec, kg, d) }, nil
	})
}

// CaptureChanges is SnapshotChanges of state that is encoded by the
// writer: at the barrier, capture ends the state's epoch and returns it,
// with encode, which the writer calls later to fill the sections of the
// entries that d says as they were at the barrier, while the subtask goes
// on changing the state. The subtask's stall is capture's, whatever
// encode costs.
func CaptureChanges[K comparable](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, st Changes,
	capture func(d state.Delta) (epoch uint64, encode func(sec *state.Sections, keyGroup func(K) int) error, err error)) {
	kg := keyGroupOf(s.task, hash)
	snapshotChanges(s, node, name, keySchema, valueSchema, st, true, func(d state.Delta) (uint64, func(*state.Sections) (uint64, error), error) {
		epoch, encode, err := capture(d)
		return epoch, func(sec *state.Sections) (uint64, error) { return epoch, encode(sec, kg) }, err
	})
}

// keyGroupOf returns the function that gives a key's key group, from
// the key's hash.
func keyGroupOf[K comparable](t *Task, hash func(K) uint64) func(K) int {
	maxP := t.cp.cfg.MaxParallelism
	return func(k K) int { return keygroup.Of(hash(k), maxP) }
}

// snapshotChanges is SnapshotChanges and CaptureChanges: capture returns
// the epoch it ended, or encode does when it runs at the barrier (async
// false). It is not generic, so that programs do not compile it again
// for each key type: the key's type is in capture's closures.
func snapshotChanges(s *Snapshot, node int, name string, keySchema, valueSchema string, st Changes, async bool,
	capture func(d state.Delta) (uint64, func(*state.Sections) (uint64, error), error)) {
	t := s.task
	m := s.stateChain(node, name)
	d := state.Delta{Full: m.full, Keep: st.Epoch(), Canonical: s.Savepoint()}
	if m.ok {
		d.Since, d.Keep = m.base.epoch, m.base.epoch
	}
	start, end := t.keyRange(node)
	// The hint is the subtask's or, for a capture, the writer's: the
	// same state is always one or the other.
	hint := t.sizeHint(node, name, end-start)
	if !m.full {
		// A delta's buffers start at the size of the last delta's
		// sections: where most entries change between two checkpoints
		// (Nexmark q5's windows) a delta is as large as a full file, and
		// buffers grown by doubling copied and cleared as much again
		// (BenchmarkWindowStateSnapshotSized against
		// BenchmarkWindowStateSnapshot: 16 against 19 ns a window,
		// before windows sized a first file's sections as they encode
		// it: eventtime's sectionSizer).
		hint = t.sizeHint(node, name+"\x00delta", end-start)
	}
	spare := t.sectionBuffers(node, name)
	n := &t.cp.cfg.Nodes[node]
	epoch, encode, err := capture(d)
	if err != nil {
		s.err = fmt.Errorf("%s[%d]: %w", n.Name, t.sub, err)
		return
	}
	// encodeSections encodes the sections and sets epoch; it runs at the
	// barrier or in the writer.
	encodeSections := func() ([][]byte, error) {
		// The buffers start at the size of the last snapshot's sections
		// of the same kind, full or delta, and are the last snapshot's
		// where those are large enough.
		sec := spare.sections(start, end, hint)
		var err error
		epoch, err = encode(sec)
		for i := 0; err == nil && i < len(sec.W); i++ {
			err = sec.W[i].Err() // a value the encoder refused, such as a cycle
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", n.Name, t.sub, err)
		}
		sections := make([][]byte, len(sec.W))
		for i := range sec.W {
			sections[i] = sec.W[i].Bytes()
			hint[i] = len(sections[i]) // a delta's says nothing of the next full file's: they are apart
		}
		return sections, nil
	}
	var sections [][]byte
	if !async {
		if sections, err = encodeSections(); err != nil {
			s.err = err
			return
		}
	}
	id, sub := s.ID, t.sub
	s.files = append(s.files, keyedFiles{node: node, state: name, keySchema: keySchema, valueSchema: valueSchema, abandon: func() {},
		write: func(stor *storage.Storage) ([]storage.StateFile, int64, error) {
			if async {
				var err error
				if sections, err = encodeSections(); err != nil {
					return nil, 0, err
				}
			}
			fname := fmt.Sprintf("%s-%d-%06d.state", StateStem(n.UID, name), sub, id)
			w, err := stor.CreateShared(fname, start, end-start)
			if err != nil {
				return nil, 0, err
			}
			for _, b := range sections {
				w.Section(b)
			}
			// The writer kept none of them.
			spare.give(sections)
			size, crc, err := w.Close()
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", filepath.Join(storage.SharedDir, fname), err)
			}
			f := storage.StateFile{Subtask: sub, State: name, Name: fname, Shared: true, KeyGroups: [2]int{start, end}, Size: size, CRC: crc}
			link := m.link(f, epoch)
			// No delta builds on a savepoint's file: its form may not be
			// the state's (sliding windows kept in slices write whole
			// windows, and a delta of slices on top would count the
			// records of a slice twice).
			if !d.Canonical {
				m.ch.put(id, link)
			}
			return link.files, size, nil
		}})
}

// RestoreChanges hands to read the sections of the key groups this
// subtask owns in the named state of node, from the checkpoint the job
// resumes from, as RestoreKeyed does, with delta set for the sections of
// a delta; st.EndChain is called after the files of each subtask of the
// checkpoint (a full file, then the deltas on top of it). When the
// subtask owns exactly the key groups that one subtask of the checkpoint
// wrote, and those files are shared, its next checkpoint may be a delta
// on top of them.
func RestoreChanges(t *Task, node int, name string, st Changes, read func(section []byte, delta bool) error) {
	start, end := t.keyRange(node)
	files := t.restoredChain(node, name, st.Track)
	if len(files) == 0 {
		return
	}
	l := t.cp.restored
	nname := t.cp.cfg.Nodes[node].Name
	t.restores = append(t.restores, func() {
		for i, f := range files {
			readSections(l, f, start, end, nname, func(_ int, sec []byte) error {
				return read(sec, f.Kind == storage.KindDelta)
			})
			// A subtask's files are one after the other in the manifest,
			// its full file first.
			if i+1 == len(files) || files[i+1].Subtask != f.Subtask || files[i+1].Kind != storage.KindDelta {
				if err := st.EndChain(); err != nil {
					fault.Abortf("restore %s: %w", nname, err)
				}
			}
		}
	})
}

// sectionBuffers keeps the buffers of one state's sections from a
// checkpoint for the next. Made anew at each checkpoint, buffers of
// Nexmark q5's windows (5 MiB a checkpoint) were fresh memory each time:
// the runtime returned them to the operating system between two
// checkpoints, and the kernel faulted them in again at the next, a
// checkpoint's pages taking about as much CPU as its encoding. The
// buffers are taken at the barrier or by the writer, and given back by
// the writer once the file has them, hence the lock. Between two
// checkpoints a state keeps its last checkpoint's size in them, up to
// about twice that (state.NewSectionsIn drops a spare of more).
type sectionBuffers struct {
	mu   sync.Mutex
	bufs [][]byte
}

// sectionBuffers returns the spare buffers of the named state of node.
func (t *Task) sectionBuffers(node int, name string) *sectionBuffers {
	key := fmt.Sprint(node, "/", name)
	b := t.spare[key]
	if b == nil {
		b = new(sectionBuffers)
		if t.spare == nil {
			t.spare = map[string]*sectionBuffers{}
		}
		t.spare[key] = b
	}
	return b
}

// sections prepares the sections of key groups [start, end) in the
// spare buffers (state.NewSectionsIn). A section without a hint gets
// none: the state sizes sections that have no room as it encodes them
// (eventtime's sectionSizer).
func (b *sectionBuffers) sections(start, end int, hint []int) *state.Sections {
	b.mu.Lock()
	bufs := b.bufs
	b.bufs = nil
	b.mu.Unlock()
	return state.NewSectionsIn(start, end, hint, bufs)
}

// give keeps bufs for the next checkpoint, unless buffers are kept
// already (two checkpoints were being written at once).
func (b *sectionBuffers) give(bufs [][]byte) {
	b.mu.Lock()
	if b.bufs == nil {
		b.bufs = bufs
	}
	b.mu.Unlock()
}
