package checkpoint

import (
	"errors"
	"fmt"
	"time"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// The checkpoint coordinator runs the Asynchronous Barrier Snapshot
// protocol: it injects barrier n into every source, collects one snapshot
// acknowledgement from every chain subtask, writes the manifest (the commit
// point) and then commits the sinks' pending files. One checkpoint runs at
// a time; one that takes longer than the timeout, or whose writes fail, is
// given up and the job goes on: the next checkpoint includes its data.

// ack is a chain subtask's written snapshot.
type ack struct {
	id    int64
	final bool
	task  *Task
	nodes []storage.NodeState // contributions, merged by uid
	bytes int64
	align time.Duration
	stall time.Duration
	err   error
}

// inflight is the checkpoint being taken.
type inflight struct {
	id    int64
	final bool
	start time.Time
	got   int
	nodes map[string]*storage.NodeState
	bytes int64
	align time.Duration
	stall time.Duration
	err   error
	// savepoints are the requests this checkpoint answers.
	savepoints []*savepointReq
}

type coordinator struct {
	cp *Checkpointer
	// stopping is set once a stop is requested: the next checkpoint is
	// taken at once, and the job stops when one completes.
	stopping bool
	st       *storage.Storage
	next     int64
	cur      *inflight
	lastEnd  time.Time
	// done is closed when the final checkpoint is complete; finalErr is
	// its outcome.
	done     chan struct{}
	finalErr error
	// savepoints are requests waiting for the next checkpoint.
	savepoints []*savepointReq
}

func newCoordinator(cp *Checkpointer, next int64) *coordinator {
	return &coordinator{cp: cp, st: cp.st, next: next, done: make(chan struct{})}
}

// run triggers checkpoints on the interval and completes them as their
// acknowledgements come in, until the final checkpoint completes or the
// job stops.
func (c *coordinator) run() {
	cp := c.cp.cfg.Checkpoint
	tick := time.NewTicker(min(cp.Interval/4+time.Millisecond, 100*time.Millisecond))
	defer tick.Stop()
	lastTrigger := time.Now()
	defer func() {
		err := errors.New("the job stopped before the savepoint was taken")
		failSavepoints(c.savepoints, err)
		if c.cur != nil {
			failSavepoints(c.cur.savepoints, err)
		}
	}()
	for {
		select {
		case <-c.cp.ctx.Done():
			return
		case r := <-c.cp.savepointReqs:
			if c.cp.allAtEnd() {
				r.fail(errors.New("the job has read all of its input and is taking its final checkpoint: no savepoint can be taken"))
				continue
			}
			c.savepoints = append(c.savepoints, r)
			if now := time.Now(); c.cur == nil {
				lastTrigger = now
				c.trigger(now)
			}
		case a := <-c.cp.acks:
			c.receive(a)
			if c.cur == nil && c.finished() {
				return
			}
		case reply := <-c.cp.triggers:
			var id int64
			if c.cur == nil && !c.cp.allAtEnd() {
				c.trigger(time.Now())
				if c.cur != nil {
					id = c.cur.id
				}
			}
			reply <- id
		case <-c.cp.stopReq:
			c.stopping = true
			if now := time.Now(); c.cur == nil && !c.cp.allAtEnd() {
				lastTrigger = now
				c.trigger(now)
			}
		case now := <-tick.C:
			if c.cp.manual {
				continue // the driver triggers, and waits as long as a checkpoint takes
			}
			if c.cur != nil && !c.cur.final && now.Sub(c.cur.start) > cp.Timeout {
				c.cp.logf("checkpoint %d expired after %s and is given up; the next one includes its data", c.cur.id, cp.Timeout)
				c.cp.events.Emit(events.Event{Kind: events.CheckpointFailed, Checkpoint: c.cur.id, Error: fmt.Sprintf("expired after %s", cp.Timeout)})
				c.discard(c.cur.id)
				// A savepoint asked for is taken by the next one.
				c.savepoints = append(c.cur.savepoints, c.savepoints...)
				c.cur = nil
				c.lastEnd = now
			}
			if c.cur == nil && len(c.savepoints) > 0 && c.cp.allAtEnd() {
				failSavepoints(c.savepoints, errors.New("the job read all of its input before the savepoint was taken"))
				c.savepoints = nil
			}
			due := now.Sub(lastTrigger) >= cp.Interval && now.Sub(c.lastEnd) >= cp.MinPause
			if c.cur == nil && (due || c.stopping || len(c.savepoints) > 0) && !c.cp.allAtEnd() {
				lastTrigger = now
				c.trigger(now)
			}
		}
	}
}

func (c *coordinator) finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// trigger starts checkpoint c.next.
func (c *coordinator) trigger(now time.Time) {
	id := c.next
	c.next++
	if err := c.st.Prepare(id); err != nil {
		c.cp.logf("checkpoint %d not started: %v", id, err)
		c.lastEnd = now
		return
	}
	c.cur = &inflight{id: id, start: now, nodes: map[string]*storage.NodeState{}}
	if len(c.savepoints) > 0 {
		// Set before any barrier, so that every snapshot sees it.
		c.cp.savepointID.Store(id)
		c.cur.savepoints, c.savepoints = c.savepoints, nil
	}
	c.cp.mu.Lock()
	sources := c.cp.sources
	c.cp.mu.Unlock()
	for _, s := range sources {
		s.inject(id)
	}
}

func (c *coordinator) receive(a ack) {
	if a.final {
		if c.cur == nil || !c.cur.final {
			// The input has ended: whatever checkpoint was under way can
			// no longer complete (sources that ended inject no barrier),
			// and the final one supersedes it.
			if c.cur != nil {
				failSavepoints(c.cur.savepoints, errors.New("the job read all of its input before the savepoint was taken"))
			}
			id := c.next
			c.next++
			c.cur = &inflight{id: id, final: true, start: time.Now(), nodes: map[string]*storage.NodeState{}}
		}
	} else if c.cur == nil || c.cur.final || a.id != c.cur.id {
		return // a checkpoint given up already
	}
	cur := c.cur
	cur.got++
	cur.bytes += a.bytes
	cur.align = max(cur.align, a.align)
	cur.stall = max(cur.stall, a.stall)
	if a.err != nil && cur.err == nil {
		cur.err = a.err
	}
	for _, n := range a.nodes {
		m := cur.nodes[n.UID]
		if m == nil {
			m = &storage.NodeState{UID: n.UID}
			cur.nodes[n.UID] = m
		}
		m.Files = append(m.Files, n.Files...)
		m.Sources = append(m.Sources, n.Sources...)
		m.Sinks = append(m.Sinks, n.Sinks...)
		m.Subtasks = append(m.Subtasks, n.Subtasks...)
		if n.KeySchema != "" {
			m.KeySchema, m.ValueSchema = n.KeySchema, n.ValueSchema
		}
		if n.BroadcastSchema != "" {
			m.BroadcastSchema = n.BroadcastSchema
		}
	}
	if cur.got < c.cp.taskCount() {
		return
	}
	c.cur = nil
	c.lastEnd = time.Now()
	err := c.complete(cur)
	if c.cp.completed != nil {
		defer c.cp.completed(cur.id, err)
	}
	if cur.final {
		c.finalErr = err
		close(c.done)
		return
	}
	var uncommitted *uncommittedError
	switch {
	case err == nil && c.stopping:
		c.stopAt(cur.id)
		c.stopping = false
	case errors.As(err, &uncommitted):
		c.cp.logf("%v", err)
		failSavepoints(cur.savepoints, err)
	case err != nil:
		failSavepoints(cur.savepoints, fmt.Errorf("checkpoint %d failed: %w", cur.id, err))
		c.cp.logf("checkpoint %d failed and is given up, processing goes on: %v", cur.id, err)
		c.cp.events.Emit(events.Event{Kind: events.CheckpointFailed, Checkpoint: cur.id, Error: err.Error()})
		c.discard(cur.id)
	}
}

// stopAt stops the job at completed checkpoint id (once).
func (c *coordinator) stopAt(id int64) {
	c.cp.stopOnce.Do(func() {
		c.cp.stoppedAt.Store(id)
		close(c.cp.stopped)
	})
}

// discard removes the folder of a checkpoint given up: its files may be
// what filled the disk, and no manifest will ever name them. A writer still
// at work on it fails, and its acknowledgement is ignored.
func (c *coordinator) discard(id int64) {
	if err := c.st.Remove(id); err != nil {
		c.cp.logf("cannot remove checkpoint %d, which was given up: %v", id, err)
	}
}

// complete writes the manifest of a checkpoint whose every subtask has
// acknowledged, then commits the sinks' files.
func (c *coordinator) complete(cur *inflight) error {
	if cur.err != nil {
		return cur.err
	}
	if cur.final {
		if err := c.st.Prepare(cur.id); err != nil {
			return err
		}
	}
	cfg := c.cp.cfg
	m := &storage.Manifest{
		ID:             cur.id,
		Job:            cfg.Name,
		Fingerprint:    cfg.Fingerprint,
		Time:           time.Now().UTC(),
		Final:          cur.final,
		Mode:           cfg.Checkpoint.Mode,
		MaxParallelism: cfg.MaxParallelism,
		Origin:         c.cp.origin,
	}
	var stateSize int64
	for _, n := range cfg.Nodes {
		ns := storage.NodeState{UID: n.UID, Name: n.Name, Kind: n.Kind, Parallelism: n.Parallelism, Connector: n.Connector,
			KeySchema: n.KeySchema, ValueSchema: n.ValueSchema, BroadcastSchema: n.BroadcastSchema}
		if got := cur.nodes[n.UID]; got != nil {
			ns.Files, ns.Sources, ns.Sinks, ns.Subtasks = got.Files, got.Sources, got.Sinks, got.Subtasks
			sortBySubtask(ns.Subtasks, func(s storage.SubtaskState) int { return s.Subtask })
			if ns.KeySchema == "" {
				// Settings built without the compiler (tests) have no
				// schemas: the snapshots tell them.
				ns.KeySchema, ns.ValueSchema = got.KeySchema, got.ValueSchema
			}
			if ns.BroadcastSchema == "" {
				ns.BroadcastSchema = got.BroadcastSchema
			}
			sortBySubtask(ns.Files, func(f storage.StateFile) int { return f.Subtask })
			sortBySubtask(ns.Sources, func(s storage.SourceState) int { return s.Subtask })
			sortBySubtask(ns.Sinks, func(s storage.SinkState) int { return s.Subtask })
			for _, f := range ns.Files {
				stateSize += f.Size
			}
		}
		ns.Sinks = append(ns.Sinks, c.cp.retiredSinks(&n)...)
		m.Nodes = append(m.Nodes, ns)
	}
	m.Stats = storage.Stats{Duration: time.Since(cur.start), Alignment: cur.align, Stall: cur.stall, BytesWritten: cur.bytes, StateSize: stateSize}
	if err := c.st.Commit(m); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	// The checkpoint is complete: its output may become visible.
	if err := c.cp.out.Commit(m); err != nil {
		return &uncommittedError{id: m.ID, err: err}
	}
	c.cp.committed.Store(m.ID)
	c.cp.events.Emit(events.Event{Kind: events.Checkpoint, Checkpoint: m.ID, Final: m.Final, Duration: m.Stats.Duration, Alignment: m.Stats.Alignment, Bytes: m.Stats.BytesWritten})
	if c.cp.verbose {
		what := "checkpoint"
		if m.Final {
			what = "final checkpoint"
		}
		c.cp.logf("%s %d done in %s: alignment %s, %s written, state %s", what, m.ID, m.Stats.Duration.Round(time.Millisecond), m.Stats.Alignment.Round(time.Microsecond), storage.Size(m.Stats.BytesWritten), storage.Size(m.Stats.StateSize))
	}
	if len(cur.savepoints) > 0 {
		c.writeSavepoints(m, cur.savepoints)
	}
	if m.Final {
		// Snapshots of checkpoints that the final one superseded may
		// still be written: the job ends once this returns, and their
		// files would be left behind.
		c.cp.drainWrites()
	}
	c.prune()
	return nil
}

// uncommittedError is a completed checkpoint whose output could not all be
// committed: the next checkpoint, or a restart, commits it.
type uncommittedError struct {
	id  int64
	err error
}

func (e *uncommittedError) Error() string {
	return fmt.Sprintf("checkpoint %d is complete, but committing its output failed (the next checkpoint or a restart commits it): %v", e.id, e.err)
}

func (e *uncommittedError) Unwrap() error { return e.err }

func sortBySubtask[T any](xs []T, sub func(T) int) {
	for i := 1; i < len(xs); i++ {
		for k := i; k > 0 && sub(xs[k]) < sub(xs[k-1]); k-- {
			xs[k], xs[k-1] = xs[k-1], xs[k]
		}
	}
}

// prune removes completed checkpoints beyond the newest retain, and
// folders of checkpoints older than the newest complete one that never
// completed.
func (c *coordinator) prune() {
	entries, err := c.st.List()
	if err != nil {
		return
	}
	kept := 0
	newest := int64(0)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Complete {
			if newest == 0 {
				newest = e.ID
			}
			kept++
			if kept <= c.cp.cfg.Checkpoint.Retain {
				continue
			}
		} else if newest == 0 || c.cur != nil && e.ID >= c.cur.id {
			continue // under way
		}
		if err := c.st.Remove(e.ID); err != nil {
			c.cp.logf("cannot remove old checkpoint %d: %v", e.ID, err)
		}
	}
	c.cp.sweep()
}

// sweep removes the shared files that no complete checkpoint in the
// directory refers to: those of checkpoints pruned, given up or failed,
// and those a crash left. It runs when no checkpoint is under way (after
// one completed, and before a run starts), and not while a snapshot of
// one given up is still being written, so that no file it removes is
// being written for one (the next sweep removes those); when a manifest
// cannot be read it removes nothing.
func (c *Checkpointer) sweep() {
	if c.unwritten.Load() > 0 {
		return
	}
	entries, err := c.st.List()
	if err != nil {
		return
	}
	keep := map[string]bool{}
	for _, e := range entries {
		if !e.Complete {
			continue
		}
		m, err := c.st.ReadManifest(e.ID)
		if err != nil {
			return // its files are not known: keep them all
		}
		for _, name := range m.SharedFiles() {
			keep[name] = true
		}
	}
	if _, err := c.st.Sweep(keep); err != nil {
		c.logf("cannot remove shared files no checkpoint refers to: %v", err)
	}
}

// drainWrites waits until every snapshot submitted is written, or the job
// stops.
func (c *Checkpointer) drainWrites() {
	for c.unwritten.Load() > 0 {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(time.Millisecond):
		}
	}
}
