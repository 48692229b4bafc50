package checkpoint

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/state"
)

// keyRange is the key groups a subtask of node owns.
func (t *Task) keyRange(node int) (start, end int) {
	return keygroup.Range(t.sub, t.cp.cfg.MaxParallelism, t.cp.cfg.Nodes[node].Parallelism)
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
// the states of one node ("" for its main state). Each section's buffer
// starts with the size that section had in the subtask's previous
// snapshot, so that encoding rarely grows a buffer.
func SnapshotKeyed[K comparable](s *Snapshot, node int, name string, hash func(K) uint64, keySchema, valueSchema string, write func(sec *state.Sections, keyGroup func(K) int) error) {
	start, end := s.task.keyRange(node)
	hint := s.task.sizeHint(node, name, end-start)
	sec := state.NewSectionsSized(start, end, hint)
	maxP := s.task.cp.cfg.MaxParallelism
	err := write(sec, func(k K) int { return keygroup.Of(hash(k), maxP) })
	for i := 0; err == nil && i < len(sec.W); i++ {
		err = sec.W[i].Err() // a value the encoder refused, such as a cycle
	}
	if err != nil {
		s.err = fmt.Errorf("%s[%d]: %w", s.task.cp.cfg.Nodes[node].Name, s.task.sub, err)
		return
	}
	ks := keyedSnapshot{node: node, state: name, start: start, keySchema: keySchema, valueSchema: valueSchema}
	for i := range sec.W {
		b := sec.W[i].Bytes()
		hint[i] = len(b)
		ks.sections = append(ks.sections, b)
	}
	s.keyed = append(s.keyed, ks)
}

// sizeHint returns the section sizes of the subtask's previous snapshot
// of the named state of node (zeros the first time), to be updated.
func (t *Task) sizeHint(node int, name string, n int) []int {
	key := fmt.Sprint(node, "/", name)
	h := t.hints[key]
	if len(h) != n {
		h = make([]int, n)
		if t.hints == nil {
			t.hints = map[string][]int{}
		}
		t.hints[key] = h
	}
	return h
}

// RestoreKeyed hands to read the sections of the key groups this subtask
// owns in the named state of node, from the checkpoint the job resumes
// from, whichever files hold them (the parallelism may have changed).
//
// The reading is done later, before the job's subtasks start: the job
// restores its subtasks in parallel (RunRestores), each reading its files
// one section at a time, so that no file is held in memory whole and what
// was read is garbage once decoded. read keeps nothing of a section: its
// bytes are reused for the next one.
func RestoreKeyed(t *Task, node int, name string, read func(section []byte) error) {
	ns := t.cp.restoredNode(node)
	if ns == nil {
		return // a fresh start, or a node new in this version: it starts empty
	}
	l := t.cp.restored
	n := &t.cp.cfg.Nodes[node]
	start, end := t.keyRange(node)
	t.restores = append(t.restores, func() {
		for _, f := range ns.Files {
			if f.State != name || f.KeyGroups[1] <= start || f.KeyGroups[0] >= end {
				continue
			}
			r, err := l.Open(f)
			if err != nil {
				fault.Abortf("restore %s: %w", n.Name, err)
			}
			for kg, sec, ok := r.Next(); ok; kg, sec, ok = r.Next() {
				if kg < start || kg >= end {
					continue
				}
				if err := read(sec); err != nil {
					r.Close()
					fault.Abortf("restore %s: %s, key group %d: %w", n.Name, f.Name, kg, err)
				}
			}
			if err := r.Close(); err != nil {
				fault.Abortf("restore %s: %w", n.Name, err)
			}
		}
	})
}
