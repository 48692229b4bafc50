package checkpoint

import (
	"errors"
	"fmt"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/schema"
)

// ErrFinished is returned by Recover when the checkpoint to resume from is
// a final one: the job ran to the end of its input already.
var ErrFinished = errors.New("finished")

// Recover decides where the run starts: from a checkpoint (the folder from,
// or the newest complete and intact one in the checkpoint directory) or
// from the beginning. It commits the restored checkpoint's output, has the
// output cleaned of what no checkpoint commits, and sets the number of the
// next checkpoint. With savepoint set, from is a savepoint's folder (run
// --from-savepoint). quiet leaves out the lines that say what it did.
func (c *Checkpointer) Recover(from string, savepoint, quiet bool) error {
	entries, err := c.st.List()
	if err != nil {
		return fmt.Errorf("read checkpoint directory %s: %w", c.st.Dir, err)
	}
	c.nextID = 1
	if len(entries) > 0 {
		c.nextID = entries[len(entries)-1].ID + 1
	}
	var l *storage.Loaded
	switch {
	case from != "" && savepoint:
		if l, err = storage.LoadSavepoint(c.fs, from); err != nil {
			return fmt.Errorf("--from-savepoint %s: %w", from, err)
		}
		// The same command line run again after a crash resumes from the
		// newest checkpoint that descends from the savepoint, not from the
		// savepoint again.
		if d := c.descendant(entries, l.Manifest.SavepointID); d != nil {
			if !quiet {
				c.logf("checkpoint %d descends from savepoint %s (a run from it was interrupted): resuming from it", d.Manifest.ID, from)
			}
			l = d
		}
	case from != "":
		if l, err = storage.LoadDir(c.fs, from); err != nil {
			return fmt.Errorf("--from-checkpoint %s: %w", from, err)
		}
	case c.Enabled():
		for i := len(entries) - 1; i >= 0 && l == nil; i-- {
			e := entries[i]
			if !e.Complete {
				if e.ID > newestComplete(entries) {
					c.logf("checkpoint %d is incomplete (no manifest): skipping it", e.ID)
				}
				continue
			}
			if l, err = c.st.Load(e.ID); err != nil {
				c.logf("checkpoint %d is damaged, skipping it: %v", e.ID, err)
				l = nil
			}
		}
	}
	// Folders of checkpoints that can no longer complete, and shared
	// files that no complete checkpoint refers to (a crash left them),
	// are removed before the run writes new ones.
	if c.Enabled() {
		newest := newestComplete(entries)
		for _, e := range entries {
			if !e.Complete && e.ID < newest {
				if err := c.st.Remove(e.ID); err != nil {
					c.logf("cannot remove incomplete checkpoint %d: %v", e.ID, err)
				}
			}
		}
		c.sweep()
	}
	if l == nil {
		return c.out.Clean(nil)
	}
	if err := c.checkCompatible(l.Manifest); err != nil {
		return fmt.Errorf("cannot resume from %s: %w", l.Dir, err)
	}
	if err := c.out.Commit(l.Manifest); err != nil {
		return fmt.Errorf("commit the output of %s: %w", l.Dir, err)
	}
	c.committed.Store(l.Manifest.ID)
	c.origin = l.Manifest.Origin
	if l.Manifest.Savepoint {
		c.origin = l.Manifest.SavepointID
	}
	// Checkpoint ids go on after the one resumed from (a savepoint's or
	// another directory's may be higher than any here).
	c.nextID = max(c.nextID, l.Manifest.ID+1)
	if err := c.out.Clean(l.Manifest); err != nil {
		return err
	}
	c.restored = l
	if l.Manifest.Final {
		return ErrFinished
	}
	c.events.Emit(events.Event{Kind: events.Resume, Checkpoint: l.Manifest.ID, Path: l.Dir})
	if !quiet {
		what := "checkpoint"
		if l.Manifest.Savepoint {
			what = "the savepoint of checkpoint"
		}
		c.logf("resuming from %s %d (%s)", what, l.Manifest.ID, l.Dir)
	}
	return nil
}

// descendant is the newest complete, intact checkpoint in the directory
// whose state descends from the savepoint with id, nil when there is none.
func (c *Checkpointer) descendant(entries []storage.Entry, id string) *storage.Loaded {
	if id == "" {
		return nil
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if !entries[i].Complete {
			continue
		}
		m, err := c.st.ReadManifest(entries[i].ID)
		if err != nil || m.Origin != id {
			continue
		}
		if l, err := c.st.Load(entries[i].ID); err == nil {
			return l
		}
	}
	return nil
}

func newestComplete(entries []storage.Entry) int64 {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Complete {
			return entries[i].ID
		}
	}
	return 0
}

// checkCompatible refuses a checkpoint this program cannot resume from:
// one of another job, or of a version of this job whose state this one
// would read wrong (compatible changes resume, and say so), or with
// settings the state depends on changed.
func (c *Checkpointer) checkCompatible(m *storage.Manifest) error {
	cfg := c.cfg
	if m.Job != "" && m.Job != cfg.Name {
		return fmt.Errorf("it is a checkpoint of job %s, not of %s: two jobs share the checkpoint directory %s; give this one a directory of its own (checkpoint.dir, or run --checkpoint-dir), or start it over with run --fresh, which moves the old checkpoints aside", m.Job, cfg.Name, c.st.Dir)
	}
	// The stored schemas are compared on every restore, whether or not
	// the fingerprint changed: a savepoint may come from another build.
	if err := c.checkState(m); err != nil {
		return fmt.Errorf("%w; to start this version over, run --fresh (the old checkpoints are moved aside, not deleted)", err)
	}
	if m.Fingerprint != cfg.Fingerprint && m.Fingerprint != "" && cfg.Fingerprint != "" {
		c.logf("the job changed since checkpoint %d (its graph or state types); its state fits this version, which resumes from it", m.ID)
	}
	if m.MaxParallelism != cfg.MaxParallelism {
		return fmt.Errorf("it has %d key groups (max-parallelism) and this run %d: max-parallelism is fixed for the life of the state", m.MaxParallelism, cfg.MaxParallelism)
	}
	for _, n := range cfg.Nodes {
		ns := m.Node(n.UID)
		if ns == nil || n.Kind != "source" || len(ns.Sources) == 0 {
			continue
		}
		if conn := n.Catalog(); conn != nil && conn.Rescalable || c.manual {
			// Its subtasks share out the positions of all (RestoredNode);
			// a test driver's sources all hold the driver's one position.
			continue
		}
		if ns.Parallelism != n.Parallelism {
			return fmt.Errorf("source %s ran with %d subtasks and this run has %d: sources cannot change parallelism yet; run with --set sources.%s.parallelism=%d", n.Name, ns.Parallelism, n.Parallelism, n.Name, ns.Parallelism)
		}
	}
	return nil
}

// checkState compares what each node of checkpoint m holds with what this
// version of the job reads: state of a node it no longer has, of a node
// of another kind, or under a schema its decoders cannot read, is refused
// before anything is decoded.
func (c *Checkpointer) checkState(m *storage.Manifest) error {
	for _, old := range m.Nodes {
		keyed, positions := len(old.Files) > 0, len(old.Sources) > 0
		if !keyed && !positions {
			continue // sink files are committed by the manifest; watermarks only inform
		}
		var now *config.NodeConfig
		for i := range c.cfg.Nodes {
			if c.cfg.Nodes[i].UID == old.UID {
				now = &c.cfg.Nodes[i]
			}
		}
		switch {
		case now == nil && c.allowNonRestored:
			c.logf("warning: checkpoint %d holds the state of %s %q (uid %s), which this version of the job does not have: it is left behind (--allow-non-restored-state)", m.ID, old.Kind, old.Name, old.UID)
			continue
		case now == nil:
			return fmt.Errorf("checkpoint %d holds the state of %s %q (uid %s), which this version of the job does not have: it would be lost (run --allow-non-restored-state to leave it behind, or give the node back with uid: %s)", m.ID, old.Kind, old.Name, old.UID, old.UID)
		case old.Kind != "" && now.Kind != old.Kind:
			return fmt.Errorf("%q (uid %s) was of kind %s in checkpoint %d and is of kind %s now: its state cannot be read", now.Name, old.UID, old.Kind, m.ID, now.Kind)
		case positions && now.Connector != old.ConnectorOr(now.Connector):
			return fmt.Errorf("source %q (uid %s) read with connector %s in checkpoint %d and with %s now: its read position cannot be used", now.Name, old.UID, old.Connector, m.ID, now.Connector)
		}
		if old.BroadcastSchema != "" && now.BroadcastSchema != "" {
			if err := schema.CompatibleStrings(old.BroadcastSchema, now.BroadcastSchema); err != nil {
				return fmt.Errorf("the broadcast state of %q (uid %s) in checkpoint %d cannot be read by this version: %w", now.Name, old.UID, m.ID, err)
			}
		}
		if !keyed || now.KeySchema == "" || old.KeySchema == "" {
			continue
		}
		if old.KeySchema != now.KeySchema {
			return fmt.Errorf("the key of %q (uid %s) was %s in checkpoint %d and is %s now: keys decide where state lives, so its state cannot be read", now.Name, old.UID, old.KeySchema, m.ID, now.KeySchema)
		}
		if err := schema.CompatibleStrings(old.ValueSchema, now.ValueSchema); err != nil {
			return fmt.Errorf("the state of %q (uid %s) in checkpoint %d cannot be read by this version: %w", now.Name, old.UID, m.ID, err)
		}
	}
	return nil
}

// restoredNode is what node contributed to the checkpoint the run resumes
// from, nil for a fresh start or a node new in this version.
func (c *Checkpointer) restoredNode(node int) *storage.NodeState {
	if c.restored == nil {
		return nil
	}
	return c.restored.Manifest.Node(c.cfg.Nodes[node].UID)
}

// RestoredNode is what node contributed to the checkpoint the run resumes
// from (every subtask's positions, a sink's transactions), nil for a fresh
// start or a node new in this version. A source whose connector is
// Rescalable shares out the positions of every old subtask among its new
// ones.
func (c *Checkpointer) RestoredNode(node int) *storage.NodeState { return c.restoredNode(node) }

// RestoredSource returns the read position a source subtask resumes from,
// or nil when it starts from the beginning.
func (c *Checkpointer) RestoredSource(node, sub int) *storage.SourceState {
	ns := c.restoredNode(node)
	if ns == nil {
		return nil
	}
	for i := range ns.Sources {
		if ns.Sources[i].Subtask == sub {
			return &ns.Sources[i]
		}
	}
	return nil
}

// RestoredSink returns the state a sink subtask resumes from: its own, or,
// for a subtask new in this run, a next file number above every other.
func (c *Checkpointer) RestoredSink(node, sub int) (state storage.SinkState, ok bool) {
	ns := c.restoredNode(node)
	if ns == nil {
		return storage.SinkState{}, false
	}
	var highest uint64
	for _, s := range ns.Sinks {
		if s.Subtask == sub {
			return s, true
		}
		highest = max(highest, s.NextSeq)
	}
	return storage.SinkState{Subtask: sub, NextSeq: highest}, true
}

// retiredSinks returns the sink states of node n's subtasks in the
// checkpoint the job resumes from that this run does not have (its
// parallelism is lower), without pending files (Recover committed them).
// Every checkpoint carries them on, so that a subtask that comes back with
// a higher parallelism numbers its files after the ones it committed
// before instead of overwriting them.
func (c *Checkpointer) retiredSinks(n *config.NodeConfig) []storage.SinkState {
	if c.restored == nil {
		return nil
	}
	ns := c.restored.Manifest.Node(n.UID)
	if ns == nil {
		return nil
	}
	var retired []storage.SinkState
	for _, s := range ns.Sinks {
		if s.Subtask >= n.Parallelism {
			retired = append(retired, storage.SinkState{Subtask: s.Subtask, NextSeq: s.NextSeq, Path: s.Path})
		}
	}
	return retired
}
