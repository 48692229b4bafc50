package runtime

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

// Task is the checkpoint handle of one subtask of a chain. Generated code
// makes one per chain subtask; the coordinator expects one acknowledgement
// from each for every checkpoint.
type Task struct {
	j    *Job
	name string // the chain head's name
	sub  int
	// align is how long the last barrier took to align in the inbox.
	align time.Duration
}

// Task registers subtask sub of the chain headed by node head.
func (j *Job) Task(head, sub int) *Task {
	j.mu.Lock()
	j.tasks++
	j.mu.Unlock()
	return &Task{j: j, name: j.Node(head).Name, sub: sub}
}

// Snapshot collects what one chain subtask contributes to a checkpoint. It
// is filled on the subtask's goroutine at the barrier, then written by the
// job's writer while the subtask goes on.
type Snapshot struct {
	ID    int64
	Final bool
	task  *Task
	keyed []keyedSnapshot
	// sources, sinks and async are filled by connectors.
	sources  []sourceSnapshot
	sinks    []sinkSnapshot
	subtasks []subtaskSnapshot
	async    []func() error
	align    time.Duration
	err      error
}

type keyedSnapshot struct {
	node        int
	state       string // "" for the node's main state
	start       int
	sections    [][]byte
	keySchema   string
	valueSchema string
}

type sourceSnapshot struct {
	node  int
	state SourceState
}

type subtaskSnapshot struct {
	node  int
	state SubtaskState
}

// Watermarks adds a source subtask's watermark generator to the snapshot.
func (s *Snapshot) Watermarks(node int, g *Watermarks) {
	w := codec.NewWriter(nil)
	g.encode(w)
	s.subtasks = append(s.subtasks, subtaskSnapshot{node: node, state: SubtaskState{Subtask: s.task.sub, Generator: w.Bytes()}})
}

// InboxWatermarks adds the watermarks of a subtask's senders to the
// snapshot: after a recovery, lateness is judged as it was.
func (s *Snapshot) InboxWatermarks(node int, wms []int64) {
	s.subtasks = append(s.subtasks, subtaskSnapshot{node: node, state: SubtaskState{Subtask: s.task.sub, Watermarks: wms}})
}

// restoredSubtask returns the event-time progress a subtask of node
// resumes from, or nil.
func (t *Task) restoredSubtask(node int) *SubtaskState {
	l := t.j.restored
	if l == nil {
		return nil
	}
	ns := l.Manifest.Node(t.j.Node(node).UID)
	if ns == nil {
		return nil
	}
	for i := range ns.Subtasks {
		if ns.Subtasks[i].Subtask == t.sub {
			return &ns.Subtasks[i]
		}
	}
	return nil
}

// RestoreWatermarks sets an inbox's senders' watermarks from the checkpoint
// the job resumes from.
func (t *Task) RestoreWatermarks(node int, in interface{ RestoreWatermarks([]int64) }) {
	if st := t.restoredSubtask(node); st != nil {
		in.RestoreWatermarks(st.Watermarks)
	}
}

type sinkSnapshot struct {
	node  int
	state SinkState
}

// Enabled reports whether the job takes checkpoints.
func (t *Task) Enabled() bool { return t.j.Config.Checkpoint.Mode != NoCheckpoints }

// Begin starts the subtask's snapshot for checkpoint id.
func (t *Task) Begin(id int64) *Snapshot {
	s := &Snapshot{ID: id, task: t, align: t.align}
	t.align = 0
	return s
}

// Final starts the subtask's last snapshot, taken when its input has
// ended: the job's final checkpoint, which commits the rest of the output.
func (t *Task) Final() *Snapshot {
	return &Snapshot{Final: true, task: t}
}

// Submit hands a filled snapshot to the job's writer.
func (t *Task) Submit(s *Snapshot) {
	if !t.Enabled() {
		return
	}
	select {
	case t.j.writes <- s:
	case <-t.j.ctx.Done():
		Abort(errCanceled)
	}
}

// keyRange is the key groups a subtask of node owns.
func (t *Task) keyRange(node int) (start, end int) {
	return KeyGroupRange(t.sub, t.j.MaxParallelism(), t.j.Parallelism(node))
}

// SnapshotMemory captures keyed state held in memory: every entry encoded
// into the section of its key group.
func SnapshotMemory[K comparable, V any](s *Snapshot, node int, st *state.Memory[K, V], hash func(K) uint64, enc func(*codec.Writer, K, *V), keySchema, valueSchema string) {
	SnapshotKeyed(s, node, "", hash, keySchema, valueSchema, func(sec *state.Sections, keyGroup func(K) int) error {
		return st.Snapshot(sec, keyGroup, enc)
	})
}

// RestoreMemory fills keyed state held in memory from the checkpoint the
// job resumes from: the sections of the key groups this subtask owns, from
// whichever files hold them (the parallelism may have changed).
func RestoreMemory[K comparable, V any](t *Task, node int, st *state.Memory[K, V], dec func(*codec.Reader) (K, *V)) {
	RestoreKeyed(t, node, "", func(section []byte) error { return st.Restore(section, dec) })
}

// SnapshotKeyed captures keyed state of any shape (windows, timers, join
// buffers) that writes itself into key-group sections. name tells apart
// the states of one node ("" for its main state).
func SnapshotKeyed[K comparable](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, write func(sec *state.Sections, keyGroup func(K) int) error) {
	start, end := s.task.keyRange(node)
	sec := state.NewSections(start, end)
	maxP := s.task.j.MaxParallelism()
	if err := write(sec, func(k K) int { return KeyGroup(hash(k), maxP) }); err != nil {
		s.err = fmt.Errorf("%s[%d]: %w", s.task.j.Node(node).Name, s.task.sub, err)
		return
	}
	ks := keyedSnapshot{node: node, state: name, start: start, keySchema: keySchema, valueSchema: valueSchema}
	for i := range sec.W {
		ks.sections = append(ks.sections, sec.W[i].Bytes())
	}
	s.keyed = append(s.keyed, ks)
}

// RestoreKeyed hands to read the sections of the key groups this subtask owns
// in the named state of node, from the checkpoint the job resumes from.
func RestoreKeyed(t *Task, node int, name string, read func(section []byte) error) {
	l := t.j.restored
	if l == nil {
		return
	}
	n := t.j.Node(node)
	ns := l.Manifest.Node(n.UID)
	if ns == nil {
		return // a node new in this version starts empty
	}
	start, end := t.keyRange(node)
	for _, f := range ns.Files {
		if f.State != name || f.KeyGroups[1] <= start || f.KeyGroups[0] >= end {
			continue
		}
		fileStart, sections, err := DecodeStateFile(l.files[f.Name])
		if err != nil {
			Abortf("restore %s: %s: %w", n.Name, f.Name, err)
		}
		for i, sec := range sections {
			kg := fileStart + i
			if kg < start || kg >= end {
				continue
			}
			if err := read(sec); err != nil {
				Abortf("restore %s: %s, key group %d: %w", n.Name, f.Name, kg, err)
			}
		}
	}
}
