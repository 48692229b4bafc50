package checkpoint

import (
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/state"
)

// Broadcast state: what a process operator's broadcast input builds, the
// same on every subtask. It is checkpointed once, by subtask 0, into the
// section of key group 0 (which subtask 0 owns at every parallelism), and
// every subtask restores that one copy.

// broadcastState is the name generated code gives a node's broadcast
// state, under which the manifest records its schema.
const broadcastState = "broadcast"

// SnapshotBroadcast captures node's broadcast state name on subtask 0;
// other subtasks write nothing. write encodes the state.
func SnapshotBroadcast(s *Snapshot, node int, name, keySchema, valueSchema string, write func(w *codec.Writer) error) {
	if s.task.sub != 0 {
		return
	}
	SnapshotKeyed(s, node, name, func(struct{}) uint64 { return 0 }, keySchema, valueSchema, func(sec *state.Sections, _ func(struct{}) int) error {
		return write(&sec.W[0])
	})
}

// RestoreBroadcast hands to read the section that holds node's broadcast
// state name in the checkpoint the job resumes from (nothing on a fresh
// start), on every subtask.
func RestoreBroadcast(t *Task, node int, name string, read func(section []byte) error) {
	ns := t.cp.restoredNode(node)
	if ns == nil {
		return
	}
	l := t.cp.restored
	n := &t.cp.cfg.Nodes[node]
	t.restores = append(t.restores, func() {
		for _, f := range ns.Files {
			if f.State != name || f.KeyGroups[0] != 0 {
				continue
			}
			// Broadcast state is the section of key group 0.
			if err := l.ReadSections(f, 0, 1, func(_ int, sec []byte) error { return read(sec) }); err != nil {
				fault.Abortf("restore %s: broadcast state: %w", n.Name, err)
			}
		}
	})
}
