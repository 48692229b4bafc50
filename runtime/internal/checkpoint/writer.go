package checkpoint

import (
	"fmt"
	"path/filepath"

	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// writer writes submitted snapshots: state files, then the connectors'
// asynchronous parts (a sink's fsync and rename), then acknowledges. It
// runs beside the subtasks, so that processing goes on while bytes go to
// storage.
func (c *Checkpointer) writer() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case s := <-c.writes:
			a := c.write(s)
			c.unwritten.Add(-1)
			select {
			case c.acks <- a:
			case <-c.ctx.Done():
				return
			}
		}
	}
}

func (c *Checkpointer) write(s *Snapshot) ack {
	a := ack{id: s.ID, final: s.Final, task: s.task, align: s.align, stall: s.stall, err: s.err}
	// Captures not written are given up, so that their states stop
	// keeping values for them.
	defer func() {
		for _, k := range s.files {
			k.abandon()
		}
	}()
	if a.err != nil {
		return a
	}
	for _, k := range s.files {
		files, written, err := k.write(c.st)
		if err != nil {
			a.err = err
			return a
		}
		a.bytes += written
		n := &c.cfg.Nodes[k.node]
		ns := storage.NodeState{UID: n.UID, Files: files}
		setSchemas(&ns, k.state, k.keySchema, k.valueSchema)
		a.nodes = append(a.nodes, ns)
	}
	for _, k := range s.keyed {
		n := &c.cfg.Nodes[k.node]
		name := fmt.Sprintf("%s-%d.state", StateStem(n.UID, k.state), s.task.sub)
		size, crc, err := c.writeSections(s.ID, name, k.start, k.sections)
		if err != nil {
			a.err = fmt.Errorf("%s: %w", filepath.Join(storage.FolderName(s.ID), name), err)
			return a
		}
		// The file has the bytes: the next snapshot may encode into the
		// buffers.
		k.spare.give(k.sections)
		a.bytes += size
		ns := storage.NodeState{UID: n.UID, Files: []storage.StateFile{{Subtask: s.task.sub, State: k.state, Name: name,
			KeyGroups: [2]int{k.start, k.start + len(k.sections)}, Size: size, CRC: crc}}}
		setSchemas(&ns, k.state, k.keySchema, k.valueSchema)
		a.nodes = append(a.nodes, ns)
	}
	for _, src := range s.sources {
		a.nodes = append(a.nodes, storage.NodeState{UID: c.cfg.Nodes[src.node].UID, Sources: []storage.SourceState{src.state}})
	}
	for _, st := range s.subtasks {
		a.nodes = append(a.nodes, storage.NodeState{UID: c.cfg.Nodes[st.node].UID, Subtasks: []storage.SubtaskState{st.state}})
	}
	if err := s.RunAsync(); err != nil {
		a.err = err
		return a
	}
	for _, sk := range s.sinks {
		a.nodes = append(a.nodes, storage.NodeState{UID: c.cfg.Nodes[sk.node].UID, Sinks: []storage.SinkState{sk.state}})
	}
	return a
}

// writeSections writes a state file of checkpoint id from its sections,
// as they are: one write per large section, no copy of the whole.
func (c *Checkpointer) writeSections(id int64, name string, start int, sections [][]byte) (size int64, crc uint32, err error) {
	w, err := c.st.CreateState(id, name, start, len(sections))
	if err != nil {
		return 0, 0, err
	}
	for _, sec := range sections {
		w.Section(sec)
	}
	return w.Close()
}

// setSchemas records in ns the schemas of its state named state: the
// node's main state's and its broadcast state's are the user's types,
// which a later version must be able to read; the others (timers,
// windows) are the runtime's own.
func setSchemas(ns *storage.NodeState, state, keySchema, valueSchema string) {
	switch state {
	case "":
		ns.KeySchema, ns.ValueSchema = keySchema, valueSchema
	case broadcastState:
		ns.BroadcastSchema = valueSchema
	}
}

// StateStem is what the files of node uid's state named state begin with:
// the uid for its main state, uid+state for the others. A uid has only
// letters, digits, '_', '-' and '.' (settings' nodeUID), so with '+' the
// timers of node "a" (a+timers-0.state) never share a name with the state
// of a node whose uid is "a-timers" (a-timers-0.state).
func StateStem(uid, state string) string {
	if state == "" {
		return uid
	}
	return uid + "+" + state
}
