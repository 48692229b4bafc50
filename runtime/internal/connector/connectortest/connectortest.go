// Package connectortest runs connectors in tests without a job: an Env
// whose settings, log and checkpoint side the test controls.
package connectortest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// Env is a connector.Env for tests.
type Env struct {
	Config *config.Config
	ctx    context.Context
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	log    bytes.Buffer
	ckpt   *Checkpoints
	mets   *metrics.Registry
}

// Checkpoints is the checkpoint side of an Env: a real Checkpointer, whose
// newest completed checkpoint the test sets.
type Checkpoints struct {
	*checkpoint.Checkpointer
	// CommittedID is what Committed returns.
	CommittedID int64
}

// Committed returns CommittedID.
func (c *Checkpoints) Committed() int64 { return c.CommittedID }

// New returns an Env of a job named test with parallelism p, exactly-once
// checkpoints in /ckpt on the operating system's file system, and the
// given nodes; the settings are resolved.
func New(t testing.TB, p int, nodes ...config.NodeConfig) *Env {
	t.Helper()
	cfg := &config.Config{Name: "test", Parallelism: p, MaxParallelism: 128,
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Dir: "/ckpt"}, Nodes: nodes}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	e := &Env{Config: cfg, mets: metrics.New(cfg)}
	e.ctx, e.cancel = context.WithCancelCause(context.Background())
	e.SetFS(vfs.Default)
	return e
}

// SetFS makes fsys where checkpoints and sinks write; it starts the
// checkpoint side afresh, with the current settings.
func (e *Env) SetFS(fsys vfs.FS) {
	e.ckpt = &Checkpoints{Checkpointer: checkpoint.New(e.ctx, e.Config, checkpoint.Options{FS: fsys, Output: noOutput{}, Logf: e.Logf})}
}

// Restore makes m the checkpoint the run resumes from, as recovery does: it
// writes m into the checkpoint directory and recovers from it.
func (e *Env) Restore(t testing.TB, m *storage.Manifest) {
	t.Helper()
	st := e.ckpt.Storage()
	if err := st.Prepare(m.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(m); err != nil {
		t.Fatal(err)
	}
	if err := e.ckpt.Recover("", false, true); err != nil {
		t.Fatal(err)
	}
}

// Cancel stops the job with cause.
func (e *Env) Cancel(cause error) { e.cancel(cause) }

func (e *Env) Node(id int) *config.NodeConfig     { return &e.Config.Nodes[id] }
func (e *Env) Parallelism(id int) int             { return e.Config.Nodes[id].Parallelism }
func (e *Env) Context() context.Context           { return e.ctx }
func (e *Env) Checkpoints() connector.Checkpoints { return e.ckpt }
func (e *Env) Ckpt() *Checkpoints                 { return e.ckpt }
func (e *Env) Metrics() *metrics.Registry         { return e.mets }

// Logf records one line of the job's log.
func (e *Env) Logf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintf(&e.log, e.Config.Name+": "+format+"\n", args...)
}

// Logger writes the job's lines as Logf does.
func (e *Env) Logger() *slog.Logger { return slog.New(logHandler{e}) }

type logHandler struct{ e *Env }

func (h logHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	h.e.Logf("%s", r.Message)
	return nil
}
func (h logHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logHandler) WithGroup(string) slog.Handler      { return h }

// Log is what the job logged so far.
func (e *Env) Log() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

// noOutput is the sinks of a test's Env, which Recover commits nothing of.
type noOutput struct{}

func (noOutput) Commit(*storage.Manifest) error { return nil }
func (noOutput) Clean(*storage.Manifest) error  { return nil }

// Catch runs f and returns the error it aborted with (fault.Abort), nil
// when it returned; other panics go on.
func Catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			a, ok := fault.Aborted(r)
			if !ok {
				panic(r)
			}
			err = a
		}
	}()
	f()
	return nil
}

// SharedEnv is an Env that says its subtasks run at once
// (connector.Sharer), as a job's run does, for tests of what subtasks
// share: a generator's pace, a source's watermark alignment. The plain
// Env reads its subtasks one after another and shares nothing.
type SharedEnv struct {
	*Env
	connector.Shares
}

var _ connector.Sharer = (*SharedEnv)(nil)

// SourceNode is a source of connector with the given options.
func SourceNode(name, connector string, options map[string]string) config.NodeConfig {
	return config.NodeConfig{Name: name, UID: name, Kind: "source", Section: "sources", Connector: connector, Options: options}
}

// SinkNode is a sink of connector with the given options.
func SinkNode(name, connector string, options map[string]string) config.NodeConfig {
	return config.NodeConfig{Name: name, UID: name, Kind: "sink", Section: "sinks", Connector: connector, Options: options}
}

// ReadAll reads a source subtask to its end the way generated code does.
func ReadAll[T any](s interface {
	Next() (T, bool)
	Done() bool
}) []T {
	var recs []T
	for {
		if rec, ok := s.Next(); ok {
			recs = append(recs, rec)
		} else if s.Done() {
			return recs
		}
	}
}
