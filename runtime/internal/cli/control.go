package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/control"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// controlEndpoint is the running job's side of the savepoint and stop
// commands: started once the first run of the job holds its checkpoint
// directory, closed when the program ends.
type controlEndpoint struct {
	sv   *supervisor
	dir  string
	mode string
	once sync.Once
	srv  *control.Server
}

// start starts the endpoint (once); a failure is a warning: the job runs
// on, without savepoints on request.
func (c *controlEndpoint) start() {
	if c.sv == nil || c.mode == config.NoCheckpoints {
		return // no checkpoint directory to write CONTROL to, nothing to save
	}
	c.once.Do(func() {
		srv, err := control.Serve(c.dir, c)
		if err != nil {
			c.sv.log.Warn(fmt.Sprintf("no control endpoint (the savepoint and stop commands will not reach this job): %v", err))
			return
		}
		c.srv = srv
	})
}

func (c *controlEndpoint) close() {
	if c.srv != nil {
		c.srv.Close(5 * time.Second)
	}
}

func (c *controlEndpoint) Savepoint(ctx context.Context, dir string, stop, drain bool) (string, int64, error) {
	c.sv.mu.Lock()
	j := c.sv.cur
	c.sv.mu.Unlock()
	if j == nil {
		return "", 0, errors.New("the job is not running")
	}
	select {
	case res := <-j.Checkpointer().RequestSavepoint(dir, stop, drain):
		if res.Err != nil {
			return "", 0, res.Err
		}
		path, err := filepath.Abs(res.Path)
		if err != nil {
			path = res.Path
		}
		return path, res.Checkpoint, nil
	case <-ctx.Done():
		return "", 0, ctx.Err()
	}
}

func (c *controlEndpoint) Stop() error {
	c.sv.mu.Lock()
	j := c.sv.cur
	c.sv.mu.Unlock()
	if j == nil {
		return errors.New("the job is not running")
	}
	j.Stop()
	return nil
}

// savepointCommand is `NAME savepoint` and `NAME stop`: it asks the job
// running with the checkpoint directory for a savepoint (and, for stop, to
// stop at it), and prints the savepoint's path as the last line of
// standard output.
func savepointCommand(cfg *config.Config, cmd string, args []string, stdout, stderr io.Writer) int {
	name := cfg.Name
	if cmd == "savepoint" && len(args) > 0 && args[0] == "inspect" {
		return inspectSavepoint(cfg, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet(name+" "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("checkpoint-dir", cfg.Checkpoint.Dir, "")
	spDir := fs.String("savepoint-dir", "", "")
	timeout := fs.Duration("timeout", 10*time.Minute, "")
	withSavepoint, drain := new(bool), new(bool)
	if cmd == "stop" {
		fs.BoolVar(withSavepoint, "savepoint", false, "")
		fs.BoolVar(drain, "drain", false, "")
	}
	usageLine := fmt.Sprintf("usage: %s savepoint [--checkpoint-dir DIR] [--savepoint-dir D] [--timeout D]\n       %s stop [--savepoint [--drain] [--savepoint-dir D]] [--checkpoint-dir DIR] [--timeout D]\n", name, name)
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "%s %s: %v\n", name, cmd, err)
		}
		fmt.Fprint(stderr, usageLine)
		return exitUsage
	}
	if *drain {
		// Flink's stop --drain: always at a savepoint.
		*withSavepoint = true
	}
	if cmd == "stop" && !*withSavepoint {
		if *spDir != "" {
			fmt.Fprintf(stderr, "%s stop: --savepoint-dir needs --savepoint\n", name)
			return exitUsage
		}
		if _, err := control.Request(*dir, "stop", nil, *timeout); err != nil {
			fmt.Fprintf(stderr, "%s stop: %v\n", name, err)
			return exitFail
		}
		fmt.Fprintf(stderr, "%s: stopping at a checkpoint taken now\n", name)
		return exitOK
	}
	form := map[string]string{}
	if *spDir != "" {
		abs, err := filepath.Abs(*spDir)
		if err != nil {
			fmt.Fprintf(stderr, "%s %s: --savepoint-dir: %v\n", name, cmd, err)
			return exitUsage
		}
		form["dir"] = abs
	}
	if cmd == "stop" {
		form["stop"] = "1"
	}
	if *drain {
		form["drain"] = "1"
	}
	rep, err := control.Request(*dir, "savepoint", form, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", name, cmd, err)
		return exitFail
	}
	what := "savepoint"
	if cmd == "stop" {
		what = "stopped at savepoint"
	}
	fmt.Fprintf(stderr, "%s: %s of checkpoint %d:\n", name, what, rep.Checkpoint)
	fmt.Fprintln(stdout, rep.Path)
	return exitOK
}

// inspectSavepoint is `NAME savepoint inspect PATH`: it verifies the
// savepoint (every file against its checksum; exit 1 when it cannot be
// restored) and prints what it holds.
func inspectSavepoint(cfg *config.Config, args []string, stdout, stderr io.Writer) int {
	name := cfg.Name
	fs := flag.NewFlagSet(name+" savepoint inspect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dump := fs.String("dump", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintf(stderr, "usage: %s savepoint inspect [--dump NODE] PATH\n", name)
		return exitUsage
	}
	path := fs.Arg(0)
	l, err := storage.LoadSavepoint(vfs.Default, path)
	if err != nil {
		fmt.Fprintf(stderr, "%s savepoint inspect: %v\n", name, err)
		return exitFail
	}
	if *dump != "" {
		if err := dumpNode(cfg, l, *dump, stdout); err != nil {
			fmt.Fprintf(stderr, "%s savepoint inspect --dump: %v\n", name, err)
			return exitFail
		}
		return exitOK
	}
	m := l.Manifest
	fmt.Fprintf(stdout, "savepoint %s\njob %s, checkpoint %d, taken %s, mode %s, max-parallelism %d, fingerprint %s\n",
		path, m.Job, m.ID, m.Time.Local().Format("2006-01-02 15:04:05"), m.Mode, m.MaxParallelism, m.Fingerprint)
	for _, n := range m.Nodes {
		fmt.Fprintf(stdout, "\n%s %q (uid %s), parallelism %d", n.Kind, n.Name, n.UID, n.Parallelism)
		if n.Connector != "" {
			fmt.Fprintf(stdout, ", connector %s", n.Connector)
		}
		fmt.Fprintln(stdout)
		if n.KeySchema != "" {
			fmt.Fprintf(stdout, "  key   %s\n  value %s\n", n.KeySchema, n.ValueSchema)
		}
		if n.BroadcastSchema != "" {
			fmt.Fprintf(stdout, "  broadcast %s\n", n.BroadcastSchema)
		}
		for _, f := range n.Files {
			state := ""
			if f.State != "" {
				state = " (" + f.State + ")"
			}
			fmt.Fprintf(stdout, "  state%s subtask %d, key groups [%d, %d), %s  %s\n", state, f.Subtask, f.KeyGroups[0], f.KeyGroups[1], storage.Size(f.Size), f.Name)
		}
		for _, s := range n.Sources {
			end := ""
			if s.AtEnd {
				end = ", at the end of its input"
			}
			fmt.Fprintf(stdout, "  position subtask %d: %x%s\n", s.Subtask, s.Position, end)
		}
		for _, s := range n.Sinks {
			fmt.Fprintf(stdout, "  sink subtask %d: next file %d\n", s.Subtask, s.NextSeq)
		}
	}
	return exitOK
}
