package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/pipegen/pipegen/runtime/vfs"
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
	nodes []NodeState // contributions, merged by uid
	bytes int64
	align time.Duration
	err   error
}

// inflight is the checkpoint being taken.
type inflight struct {
	id    int64
	final bool
	start time.Time
	got   int
	nodes map[string]*NodeState
	bytes int64
	align time.Duration
	err   error
}

type coordinator struct {
	j       *Job
	st      *Storage
	next    int64
	cur     *inflight
	lastEnd time.Time
	// done is closed when the final checkpoint is complete; finalErr is
	// its outcome.
	done     chan struct{}
	finalErr error
}

func newCoordinator(j *Job, st *Storage, next int64) *coordinator {
	return &coordinator{j: j, st: st, next: next, done: make(chan struct{})}
}

// run triggers checkpoints on the interval and completes them as their
// acknowledgements come in, until the final checkpoint completes or the
// job stops.
func (c *coordinator) run() {
	cp := c.j.Config.Checkpoint
	tick := time.NewTicker(min(cp.Interval/4+time.Millisecond, 100*time.Millisecond))
	defer tick.Stop()
	lastTrigger := time.Now()
	for {
		select {
		case <-c.j.ctx.Done():
			return
		case a := <-c.j.acks:
			c.receive(a)
			if c.cur == nil && c.finished() {
				return
			}
		case now := <-tick.C:
			if c.cur != nil && !c.cur.final && now.Sub(c.cur.start) > cp.Timeout {
				c.j.Logf("checkpoint %d expired after %s and is given up; the next one includes its data", c.cur.id, cp.Timeout)
				c.cur = nil
				c.lastEnd = now
			}
			if c.cur == nil && now.Sub(lastTrigger) >= cp.Interval && now.Sub(c.lastEnd) >= cp.MinPause && !c.j.allAtEnd() {
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
		c.j.Logf("checkpoint %d not started: %v", id, err)
		c.lastEnd = now
		return
	}
	c.cur = &inflight{id: id, start: now, nodes: map[string]*NodeState{}}
	c.j.mu.Lock()
	sources := c.j.sources
	c.j.mu.Unlock()
	for _, s := range sources {
		s.barrier.Store(id)
	}
}

func (c *coordinator) receive(a ack) {
	if a.final {
		if c.cur == nil || !c.cur.final {
			// The input has ended: whatever checkpoint was under way can
			// no longer complete (sources that ended inject no barrier),
			// and the final one supersedes it.
			id := c.next
			c.next++
			c.cur = &inflight{id: id, final: true, start: time.Now(), nodes: map[string]*NodeState{}}
		}
	} else if c.cur == nil || c.cur.final || a.id != c.cur.id {
		return // a checkpoint given up already
	}
	cur := c.cur
	cur.got++
	cur.bytes += a.bytes
	cur.align = max(cur.align, a.align)
	if a.err != nil && cur.err == nil {
		cur.err = a.err
	}
	for _, n := range a.nodes {
		m := cur.nodes[n.UID]
		if m == nil {
			m = &NodeState{UID: n.UID}
			cur.nodes[n.UID] = m
		}
		m.Files = append(m.Files, n.Files...)
		m.Sources = append(m.Sources, n.Sources...)
		m.Sinks = append(m.Sinks, n.Sinks...)
		m.Subtasks = append(m.Subtasks, n.Subtasks...)
		if n.KeySchema != "" {
			m.KeySchema, m.ValueSchema = n.KeySchema, n.ValueSchema
		}
	}
	if cur.got < c.j.taskCount() {
		return
	}
	c.cur = nil
	c.lastEnd = time.Now()
	err := c.complete(cur)
	if cur.final {
		c.finalErr = err
		close(c.done)
		return
	}
	var uncommitted *uncommittedError
	switch {
	case errors.As(err, &uncommitted):
		c.j.Logf("%v", err)
	case err != nil:
		c.j.Logf("checkpoint %d failed and is given up, processing goes on: %v", cur.id, err)
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
	cfg := c.j.Config
	m := &Manifest{
		Format:         manifestFormat,
		ID:             cur.id,
		Job:            cfg.Name,
		Time:           time.Now().UTC(),
		Final:          cur.final,
		Mode:           cfg.Checkpoint.Mode,
		MaxParallelism: cfg.MaxParallelism,
	}
	var stateSize int64
	for _, n := range cfg.Nodes {
		ns := NodeState{UID: n.UID, Name: n.Name, Kind: n.Kind, Parallelism: n.Parallelism}
		if got := cur.nodes[n.UID]; got != nil {
			ns.Files, ns.Sources, ns.Sinks, ns.Subtasks = got.Files, got.Sources, got.Sinks, got.Subtasks
			sortBySubtask(ns.Subtasks, func(s SubtaskState) int { return s.Subtask })
			ns.KeySchema, ns.ValueSchema = got.KeySchema, got.ValueSchema
			sortBySubtask(ns.Files, func(f StateFile) int { return f.Subtask })
			sortBySubtask(ns.Sources, func(s SourceState) int { return s.Subtask })
			sortBySubtask(ns.Sinks, func(s SinkState) int { return s.Subtask })
			for _, f := range ns.Files {
				stateSize += f.Size
			}
		}
		ns.Sinks = append(ns.Sinks, c.j.retiredSinks(&n)...)
		m.Nodes = append(m.Nodes, ns)
	}
	m.Stats = Stats{Duration: time.Since(cur.start), Alignment: cur.align, BytesWritten: cur.bytes, StateSize: stateSize}
	if err := c.st.Commit(m); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	// The checkpoint is complete: its output may become visible.
	if err := commitSinks(c.j.fs, m); err != nil {
		return &uncommittedError{id: m.ID, err: err}
	}
	c.j.committed.Store(m.ID)
	if c.j.progress != nil {
		what := "checkpoint"
		if m.Final {
			what = "final checkpoint"
		}
		c.j.Logf("%s %d done in %s: alignment %s, %s written, state %s", what, m.ID, m.Stats.Duration.Round(time.Millisecond), m.Stats.Alignment.Round(time.Microsecond), size(m.Stats.BytesWritten), size(m.Stats.StateSize))
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
			if kept <= c.j.Config.Checkpoint.Retain {
				continue
			}
		} else if newest == 0 || c.cur != nil && e.ID >= c.cur.id {
			continue // under way
		}
		if err := c.st.Remove(e.ID); err != nil {
			c.j.Logf("cannot remove old checkpoint %d: %v", e.ID, err)
		}
	}
}

// commitSinks makes the sink files of a completed checkpoint visible. It is
// idempotent, so that recovery can run it again for the checkpoint it
// resumes from.
func commitSinks(fsys vfs.FS, m *Manifest) error {
	var errs []error
	for _, n := range m.Nodes {
		for _, s := range n.Sinks {
			renamed := false
			for _, p := range s.Pending {
				err := fsys.Rename(p.Pending, p.Final)
				if err == nil {
					renamed = true
					continue
				}
				if _, serr := fsys.Stat(p.Final); serr == nil && errors.Is(err, fs.ErrNotExist) {
					continue // committed before
				}
				errs = append(errs, fmt.Errorf("commit %s: %w", p.Final, err))
			}
			if renamed {
				if err := vfs.SyncDir(fsys, s.Dir); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// size prints a byte count the way people read it.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// writer writes submitted snapshots: state files, then the connectors'
// asynchronous parts (a sink's fsync and rename), then acknowledges. It
// runs beside the subtasks, so that processing goes on while bytes go to
// storage.
func (j *Job) writer(st *Storage) {
	for {
		select {
		case <-j.ctx.Done():
			return
		case s := <-j.writes:
			a := j.write(st, s)
			select {
			case j.acks <- a:
			case <-j.ctx.Done():
				return
			}
		}
	}
}

func (j *Job) write(st *Storage, s *Snapshot) ack {
	a := ack{id: s.ID, final: s.Final, task: s.task, align: s.align, err: s.err}
	if a.err != nil {
		return a
	}
	for _, k := range s.keyed {
		n := j.Node(k.node)
		name := fmt.Sprintf("%s-%d.state", n.UID, s.task.sub)
		if k.state != "" {
			name = fmt.Sprintf("%s-%s-%d.state", n.UID, k.state, s.task.sub)
		}
		size, crc, err := st.WriteState(s.ID, name, EncodeStateFile(k.start, k.sections))
		if err != nil {
			a.err = fmt.Errorf("%s: %w", filepath.Join(checkpointName(s.ID), name), err)
			return a
		}
		a.bytes += size
		ns := NodeState{UID: n.UID, Files: []StateFile{{Subtask: s.task.sub, State: k.state, Name: name,
			KeyGroups: [2]int{k.start, k.start + len(k.sections)}, Size: size, CRC: crc}}}
		if k.state == "" {
			// The schemas are the node's main state's; the others (timers)
			// are the runtime's own.
			ns.KeySchema, ns.ValueSchema = k.keySchema, k.valueSchema
		}
		a.nodes = append(a.nodes, ns)
	}
	for _, src := range s.sources {
		a.nodes = append(a.nodes, NodeState{UID: j.Node(src.node).UID, Sources: []SourceState{src.state}})
	}
	for _, st := range s.subtasks {
		a.nodes = append(a.nodes, NodeState{UID: j.Node(st.node).UID, Subtasks: []SubtaskState{st.state}})
	}
	for _, fn := range s.async {
		if err := fn(); err != nil {
			a.err = err
			return a
		}
	}
	for _, sk := range s.sinks {
		a.nodes = append(a.nodes, NodeState{UID: j.Node(sk.node).UID, Sinks: []SinkState{sk.state}})
	}
	return a
}
