package checkpoint

import (
	"context"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// Task is the checkpoint handle of one subtask of a chain. Generated code
// makes one per chain subtask; the coordinator expects one acknowledgement
// from each for every checkpoint.
type Task struct {
	cp   *Checkpointer
	name string // the chain head's name
	sub  int
	// align is how long the last barrier took to align in the inbox.
	align time.Duration
	// restores read the subtask's keyed state from the checkpoint the job
	// resumes from, once every subtask is built (RunRestores).
	restores []func()
	// hints are the section sizes of the previous snapshot of each state.
	hints map[string][]int
	// spare keeps the sections' buffers of each state that writes its
	// changes (snapshotChanges) from one checkpoint to the next.
	spare map[string]*sectionBuffers
	// chains are the files of the checkpoints of each memory state.
	chains map[string]*chain
}

// Task registers subtask sub of the chain headed by node head.
func (c *Checkpointer) Task(head, sub int) *Task {
	t := &Task{cp: c, name: c.cfg.Nodes[head].Name, sub: sub}
	c.mu.Lock()
	c.tasks++
	c.taskList = append(c.taskList, t)
	c.mu.Unlock()
	return t
}

// Aligned records how long the subtask's last barrier took to align, for
// the checkpoint's statistics.
func (t *Task) Aligned(d time.Duration) { t.align = d }

// NowMillis is processing time in Unix milliseconds, as the job's clock
// tells it: the wall clock, or a test driver's.
func (t *Task) NowMillis() int64 { return t.cp.NowMillis() }

// Subtask is the index of the task's subtask.
func (t *Task) Subtask() int { return t.sub }

// Snapshot collects what one chain subtask contributes to a checkpoint. It
// is filled on the subtask's goroutine at the barrier, then written by the
// job's writer while the subtask goes on.
type Snapshot struct {
	ID    int64
	Final bool
	task  *Task
	keyed []keyedSnapshot
	// files are keyed states that the writer encodes and writes.
	files []keyedFiles
	// sources, sinks and async are filled by connectors.
	sources  []sourceSnapshot
	sinks    []sinkSnapshot
	subtasks []subtaskSnapshot
	async    []func() error
	align    time.Duration
	// begun is when the subtask began the snapshot, stall how long it
	// stopped processing for it (until Submit).
	begun time.Time
	stall time.Duration
	err   error
}

type keyedSnapshot struct {
	node        int
	state       string // "" for the node's main state
	start       int
	sections    [][]byte
	keySchema   string
	valueSchema string
	// spare takes the sections' buffers back once they are written.
	spare *sectionBuffers
}

// keyedFiles is a keyed state captured at the barrier, which the writer
// encodes into files: write returns the files that hold the state (the
// ones written and the ones shared with earlier checkpoints) and the
// bytes written. abandon gives it up when the snapshot fails.
type keyedFiles struct {
	node int
	// state names one of several states of the node ("" for its main
	// one, which alone sets the node's schemas in the manifest).
	state                  string
	keySchema, valueSchema string
	write                  func(*storage.Storage) ([]storage.StateFile, int64, error)
	abandon                func()
}

type sourceSnapshot struct {
	node  int
	state storage.SourceState
}

type subtaskSnapshot struct {
	node  int
	state storage.SubtaskState
}

type sinkSnapshot struct {
	node  int
	state storage.SinkState
}

// Subtask is the index of the subtask the snapshot is of.
func (s *Snapshot) Subtask() int { return s.task.sub }

// AddSource adds a source subtask's read position.
func (s *Snapshot) AddSource(node int, st storage.SourceState) {
	s.sources = append(s.sources, sourceSnapshot{node: node, state: st})
}

// AddSink adds a transactional sink subtask's state.
func (s *Snapshot) AddSink(node int, st storage.SinkState) {
	s.sinks = append(s.sinks, sinkSnapshot{node: node, state: st})
}

// Async adds work that the writer does before it acknowledges the
// snapshot, while the subtask goes on: a sink's fsync and rename.
func (s *Snapshot) Async(fn func() error) {
	s.async = append(s.async, fn)
}

// RunAsync does the asynchronous work of the snapshot, as the writer does
// before it acknowledges it.
func (s *Snapshot) RunAsync() error {
	for _, fn := range s.async {
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}

// Sinks returns the sink states added to the snapshot.
func (s *Snapshot) Sinks() []storage.SinkState {
	var out []storage.SinkState
	for _, sk := range s.sinks {
		out = append(out, sk.state)
	}
	return out
}

// Encoder is event-time progress kept in a checkpoint: a source's
// watermark generator.
type Encoder interface {
	Encode() []byte
}

// Watermarks adds a source subtask's watermark generator to the snapshot.
func (s *Snapshot) Watermarks(node int, g Encoder) {
	s.subtasks = append(s.subtasks, subtaskSnapshot{node: node, state: storage.SubtaskState{Subtask: s.task.sub, Generator: g.Encode()}})
}

// InboxWatermarks adds the watermarks of a subtask's senders to the
// snapshot: after a recovery, lateness is judged as it was.
func (s *Snapshot) InboxWatermarks(node int, wms []int64) {
	s.subtasks = append(s.subtasks, subtaskSnapshot{node: node, state: storage.SubtaskState{Subtask: s.task.sub, Watermarks: wms}})
}

// restoredSubtask returns the event-time progress a subtask of node
// resumes from, or nil.
func (t *Task) restoredSubtask(node int) *storage.SubtaskState {
	ns := t.cp.restoredNode(node)
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

// Decoder is event-time progress restored from a checkpoint.
type Decoder interface {
	Decode([]byte) error
	// DecodeLowest restores the progress of several subtasks as one that
	// is behind none of them.
	DecodeLowest([][]byte) error
}

// RestoreGenerator sets a source subtask's watermark generator as the
// checkpoint the job resumes from left it. A source that ran with other
// parallelism deals its old subtasks' unread input out anew (subtask i
// may read what old subtask j had not), so old subtask i's progress is
// not this one's: each subtask starts from the lowest of them all, or a
// watermark of an old subtask that was ahead would make the records
// another left behind late.
func (t *Task) RestoreGenerator(node int, g Decoder) {
	if ns := t.cp.restoredNode(node); ns != nil && ns.Parallelism != t.cp.cfg.Nodes[node].Parallelism {
		var all [][]byte
		for _, st := range ns.Subtasks {
			if st.Generator != nil {
				all = append(all, st.Generator)
			}
		}
		if len(all) == 0 {
			return
		}
		if err := g.DecodeLowest(all); err != nil {
			fault.Abortf("sources.%s[%d]: restore watermarks: %w", t.cp.cfg.Nodes[node].Name, t.sub, err)
		}
		return
	}
	st := t.restoredSubtask(node)
	if st == nil || st.Generator == nil {
		return
	}
	if err := g.Decode(st.Generator); err != nil {
		fault.Abortf("sources.%s[%d]: restore watermarks: %w", t.cp.cfg.Nodes[node].Name, t.sub, err)
	}
}

// Enabled reports whether the job takes checkpoints.
func (t *Task) Enabled() bool { return t.cp.Enabled() }

// Begin starts the subtask's snapshot for checkpoint id.
func (t *Task) Begin(id int64) *Snapshot {
	s := &Snapshot{ID: id, task: t, align: t.align, begun: time.Now()}
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
	if !s.begun.IsZero() {
		s.stall = time.Since(s.begun)
	}
	t.cp.unwritten.Add(1)
	select {
	case t.cp.writes <- s:
	case <-t.cp.ctx.Done():
		t.cp.unwritten.Add(-1)
		fault.Abort(fault.ErrCanceled)
	}
}

// Node returns the settings of node id.
func (t *Task) Node(id int) *config.NodeConfig { return &t.cp.cfg.Nodes[id] }

// Nodes is the number of nodes of the job: Node takes ids 0 to Nodes()-1.
func (t *Task) Nodes() int { return len(t.cp.cfg.Nodes) }

// What a state backend outside this package (runtime/pebblestate) needs
// of a subtask's checkpoints.

// KeyRange is the key groups [start, end) that the task's subtask owns of
// keyed node node.
func (t *Task) KeyRange(node int) (start, end int) { return t.keyRange(node) }

// MaxParallelism is the number of key groups.
func (t *Task) MaxParallelism() int { return t.cp.cfg.MaxParallelism }

// Committed is the id of the newest completed checkpoint (the one the
// run resumed from, before its first).
func (t *Task) Committed() int64 { return t.cp.Committed() }

// Context is cancelled when the job stops.
func (t *Task) Context() context.Context { return t.cp.ctx }

// Logf writes a line to the job's log.
func (t *Task) Logf(format string, args ...any) { t.cp.logf(format, args...) }

// Storage is the checkpoint directory.
func (t *Task) Storage() *storage.Storage { return t.cp.st }

// RunID tells apart the runs of a job in one checkpoint directory: the id
// of the first checkpoint this run may take, which no earlier run took.
func (t *Task) RunID() int64 { return t.cp.nextID }

// OnRestore adds work that reads the subtask's state from the checkpoint
// the job resumes from, done once every subtask is built (RunRestores),
// and that drops much of what it decodes (a pebble store's restore): the
// garbage collector runs meanwhile.
func (t *Task) OnRestore(fn func()) {
	t.cp.dropping.Store(true)
	t.restores = append(t.restores, fn)
}

// OnClose adds work done when the run ends, once every subtask and writer
// has stopped: a backend closes its files.
func (t *Task) OnClose(fn func()) {
	t.cp.mu.Lock()
	defer t.cp.mu.Unlock()
	t.cp.closers = append(t.cp.closers, fn)
}

// RestoredFiles returns the files of the named state of node in the
// checkpoint the job resumes from that hold key groups the subtask owns,
// in manifest order, with the checkpoint; nil for a fresh start.
func (t *Task) RestoredFiles(node int, name string) ([]storage.StateFile, *storage.Loaded) {
	ns := t.cp.restoredNode(node)
	if ns == nil {
		return nil, nil
	}
	start, end := t.keyRange(node)
	var files []storage.StateFile
	for _, f := range ns.Files {
		if f.State == name && f.KeyGroups[1] > start && f.KeyGroups[0] < end {
			files = append(files, f)
		}
	}
	return files, t.cp.restored
}

// AddFiles adds keyed state that the writer writes as files: write
// returns the files that hold the state (those it wrote and those shared
// with earlier checkpoints) and the bytes it wrote; abandon gives the
// state's capture up when the snapshot fails before write runs.
func (s *Snapshot) AddFiles(node int, keySchema, valueSchema string, write func(*storage.Storage) ([]storage.StateFile, int64, error), abandon func()) {
	s.AddStateFiles(node, "", keySchema, valueSchema, write, abandon)
}

// AddStateFiles is AddFiles of the named state of node: the files write
// returns must carry the name.
func (s *Snapshot) AddStateFiles(node int, state, keySchema, valueSchema string, write func(*storage.Storage) ([]storage.StateFile, int64, error), abandon func()) {
	s.files = append(s.files, keyedFiles{node: node, state: state, keySchema: keySchema, valueSchema: valueSchema, write: write, abandon: abandon})
}
