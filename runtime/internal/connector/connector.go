// Package connector is what the built-in connectors (file, generator,
// stdout, kafka; PostgreSQL later) share: Env, what a connector needs of
// the job that runs it, the registry of transactional sinks, whose output
// the checkpoint protocol commits, and that of sources whose input a
// finished job checks.
package connector

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// Env is what a connector needs of the job that runs it.
type Env interface {
	// Node returns the settings of node id.
	Node(id int) *config.NodeConfig
	// Parallelism returns the number of subtasks of node id.
	Parallelism(id int) int
	// Context is cancelled when the job fails or is stopped.
	Context() context.Context
	// Logf writes one line to the job's log.
	Logf(format string, args ...any)
	// Logger is the job's logger, for lines about a node and subtask
	// (with the attributes "node" and "subtask").
	Logger() *slog.Logger
	// Checkpoints is the checkpoint side of the run.
	Checkpoints() Checkpoints
	// Metrics are the job's counters: sources count bytes, lag and
	// malformed records there, sinks bytes.
	Metrics() *metrics.Registry
}

// Checkpoints is what a connector needs of the checkpoint side of a run
// (a *checkpoint.Checkpointer).
type Checkpoints interface {
	// Enabled reports whether the job takes checkpoints: only then is a
	// sink transactional.
	Enabled() bool
	// FS is where checkpoints and transactional sinks write.
	FS() vfs.FS
	// Committed is the id of the newest completed checkpoint.
	Committed() int64
	// NewSourceCtl registers a source subtask.
	NewSourceCtl() *checkpoint.SourceCtl
	// RestoredSource is the read position a source subtask resumes from,
	// nil for the beginning.
	RestoredSource(node, sub int) *storage.SourceState
	// RestoredSink is the state a sink subtask resumes from.
	RestoredSink(node, sub int) (storage.SinkState, bool)
	// RestoredNode is what node contributed to the checkpoint the run
	// resumes from (the positions of every subtask), nil for none.
	RestoredNode(node int) *storage.NodeState
}

// Sharer is an Env whose subtasks run at once, each in its goroutine (a
// job's run, not a test's Env that reads subtasks one after another): the
// subtasks of one node may share a value there to coordinate, as a
// generator's keep pace.
type Sharer interface {
	// Shared returns the value of the run kept under key, which mk makes
	// the first time key is asked for. It is safe for concurrent use.
	Shared(key any, mk func() any) any
}

// Shares is a Sharer's values: an Env embeds it.
type Shares struct {
	mu     sync.Mutex
	shared map[any]any
}

// Shared returns the value kept under key, made by mk the first time.
func (s *Shares) Shared(key any, mk func() any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.shared[key]
	if !ok {
		if s.shared == nil {
			s.shared = map[any]any{}
		}
		v = mk()
		s.shared[key] = v
	}
	return v
}

// CountEvery is how many records a source reads between two updates of its
// progress count (and two checks that the job is still running).
const CountEvery = 1024

// Committer is the part of a transactional sink that outlives one run: it
// makes the output of a completed checkpoint visible, and cleans up what no
// completed checkpoint commits.
type Committer interface {
	// Commit makes the output that sink subtask state s holds for its
	// checkpoint visible. It is idempotent: recovery commits the
	// checkpoint it resumes from again. n is the sink's settings in this
	// run, nil when this version of the job no longer has the sink: the
	// output is where this run's settings say, so that a job folder can
	// be moved or copied.
	Commit(fsys vfs.FS, n *config.NodeConfig, s storage.SinkState) error
	// Clean removes the output of sink n that no completed checkpoint
	// commits, before a run starts; committed is what n's subtasks
	// committed in the checkpoint the run resumes from, nil for a fresh
	// start (whose earlier output is replaced). It returns what it removed,
	// for the log.
	Clean(fsys vfs.FS, n *config.NodeConfig, committed *storage.NodeState) (removed string, err error)
	// MoveAside moves sink n's output into a place named after tag, for
	// a run that starts over without deleting it (run --fresh), and says
	// what it moved ("" for nothing).
	MoveAside(fsys vfs.FS, n *config.NodeConfig, tag string) (moved string, err error)
	// Lock takes sink n's output for this process until the Closer is
	// closed or the process ends: two instances of a job must not write
	// into one sink. It fails at once when another process has it.
	Lock(fsys vfs.FS, n *config.NodeConfig) (io.Closer, error)
}

// InputChecker is the part of a source connector that looks at its input
// before a run: a job that finished must not report its old output as the
// result of input that changed since.
type InputChecker interface {
	// CheckFinished returns an error, saying what changed, unless the
	// input that source n's settings name now is what its subtasks read
	// to the end in a final checkpoint, which recorded read.
	CheckFinished(n *config.NodeConfig, read *storage.NodeState) error
}

var (
	mu         sync.Mutex
	committers = map[string]Committer{}
	checkers   = map[string]InputChecker{}
)

// RegisterInput makes c the input checker of the sources of connector
// name.
func RegisterInput(name string, c InputChecker) {
	mu.Lock()
	defer mu.Unlock()
	if checkers[name] != nil {
		panic(fmt.Sprintf("connector: input checker of %s registered twice", name))
	}
	checkers[name] = c
}

// InputCheckerOf returns the input checker of connector name, nil for a
// source whose input cannot change (a generator).
func InputCheckerOf(name string) InputChecker {
	mu.Lock()
	defer mu.Unlock()
	return checkers[name]
}

// Register makes c the committer of the sinks of connector name.
func Register(name string, c Committer) {
	mu.Lock()
	defer mu.Unlock()
	if committers[name] != nil {
		panic(fmt.Sprintf("connector: committer of %s registered twice", name))
	}
	committers[name] = c
}

// CommitterOf returns the committer of connector name, nil for a sink that
// is not transactional.
func CommitterOf(name string) Committer {
	mu.Lock()
	defer mu.Unlock()
	return committers[name]
}
