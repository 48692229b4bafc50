package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// The copy job, built by hand like the sum job, reads the lines of the
// files of a file source "in" on the operating system's file system and
// writes them to the file sink "out", fused with it: the whole-job tests
// of a changed input.

type copyJob struct {
	dir  string // the job's folder: checkpoints in dir/ckpt, output in dir/out
	path string // the source's path
	p    int
	ctx  context.Context
	// hook, if set, runs before record i of source subtask c.
	hook func(c *copyChain, i int)
}

func (o *copyJob) run(t *testing.T) (*Job, error) {
	t.Helper()
	cfg := &config.Config{
		Name:           "copy",
		Parallelism:    o.p,
		MaxParallelism: 128,
		Checkpoint: config.CheckpointConfig{Mode: config.ExactlyOnce, Interval: time.Millisecond, Timeout: time.Minute, Retain: 10,
			Dir: filepath.Join(o.dir, "ckpt")},
		StateBackend: "memory",
		Nodes: []config.NodeConfig{
			{Name: "in", UID: "in", Kind: "source", Section: "sources", Connector: "file", Options: map[string]string{"path": o.path}},
			{Name: "out", UID: "out", Kind: "sink", Section: "sinks", FusedWith: "in", Connector: "file", Options: map[string]string{"path": filepath.Join(o.dir, "out")}},
		},
	}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	log := new(syncBuffer)
	j := job.New(ctx, cfg, job.Options{Log: log, FS: vfs.Default})
	done := make(chan error, 1)
	go func() {
		done <- j.Run(func(j *Job) {
			for i := range j.Parallelism(0) {
				c := &copyChain{o: o, j: j, task: j.Task(0, i), src: NewFileSource(j, 0, i, LinesFormat()), out: NewFileSink(j, 1, i, EncodeString)}
				j.Go("in", i, c.run)
			}
		})
	}()
	select {
	case err := <-done:
		return j, err
	case <-time.After(jobHangGuard):
		t.Fatalf("hang: the job still runs after %v\nlog:\n%s\n%s", jobHangGuard, log, stacks())
	}
	return nil, nil
}

// copyChain is one subtask of source "in" with sink "out" fused.
type copyChain struct {
	o    *copyJob
	j    *Job
	task *Task
	src  *FileSource[string]
	out  *FileSink[string]
	n    int
	// taken is the id of the last checkpoint whose barrier the subtask
	// injected, so that a hook can wait for one taken after some record.
	taken int64
}

func (c *copyChain) run() {
	defer c.src.Recover()
	ctl := c.src.Ctl()
	for {
		if r, ok := c.src.Next(); ok {
			if c.o.hook != nil {
				c.o.hook(c, c.n)
			}
			c.n++
			c.out.Write(r)
		} else if c.src.Done() && ctl.AtEnd() {
			break
		} else {
			c.out.Flush()
		}
		if id := ctl.Poll(); id > 0 {
			s := c.task.Begin(id)
			c.src.Snapshot(s, 0)
			c.out.PreCommit(s, 1)
			c.task.Submit(s)
			c.taken = id
		} else if id < 0 {
			c.out.Flush()
		}
	}
	s := c.task.Final()
	c.src.Snapshot(s, 0)
	c.out.PreCommit(s, 1)
	c.out.End()
	c.task.Submit(s)
}

// await blocks the subtask until cond holds; the deadline only guards
// against a hang.
func (c *copyChain) await(cond func() bool) {
	for deadline := time.Now().Add(jobHangGuard); !cond(); time.Sleep(20 * time.Microsecond) {
		if c.j.Context().Err() != nil {
			fault.Abort(fault.ErrCanceled)
		}
		if time.Now().After(deadline) {
			fault.Abortf("test hang")
		}
	}
}

// committedLines returns the lines of the job's committed output, in the
// order of its files.
func (o *copyJob) committedLines(t *testing.T) []string {
	t.Helper()
	files := outputFilesIn(t, vfs.Default, filepath.Join(o.dir, "out"))
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		lines = append(lines, strings.Split(strings.TrimSuffix(string(files[name]), "\n"), "\n")...)
	}
	return lines
}

func numberedLines(prefix string, n int) (content string, lines []string) {
	for i := range n {
		lines = append(lines, fmt.Sprintf("%s %04d", prefix, i))
	}
	return strings.Join(lines, "\n") + "\n", lines
}

func writeInput(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	// As a real rewrite does, the file gets another modification time,
	// however coarse the file system's clock.
	later := time.Now().Add(time.Duration(len(content)) * time.Millisecond)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// TestKilledJobRefusesChangedInput kills the copy job after a checkpoint,
// rewrites its input with the same length, and restarts it: the restart
// fails at once (fatal: a restart would fail the same way), naming the
// file and what changed. With the input put back, it resumes and the
// output is the input, exactly.
func TestKilledJobRefusesChangedInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	content, lines := numberedLines("line", 1000)
	writeInput(t, in, content)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := &copyJob{dir: dir, path: in, p: 1, ctx: ctx}
	o.hook = func(c *copyChain, i int) {
		switch i {
		case 100:
			c.await(c.src.Ctl().BarrierDue)
		case 200:
			// Not the first checkpoint committed: it may have been taken
			// before the source read a byte, and a restart from offset 0
			// has nothing read to find changed.
			taken := c.taken
			c.await(func() bool { return c.j.Checkpointer().Committed() >= taken })
			cancel()
			fault.Abort(fault.ErrCanceled)
		}
	}
	if _, err := o.run(t); err == nil {
		t.Fatal("the job was not stopped")
	}
	o.ctx, o.hook = nil, nil

	writeInput(t, in, strings.Replace(content, "line 0001", "LINE 0001", 1))
	_, err := o.run(t)
	var fatal *fault.Fatal
	if !errors.As(err, &fatal) {
		t.Fatalf("restart on a changed input: %v, want a fatal error", err)
	}
	for _, want := range []string{in + " changed since the checkpoint", "are not the same", "--fresh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not say %q", err, want)
		}
	}

	writeInput(t, in, content)
	if _, err := o.run(t); err != nil {
		t.Fatalf("restart on the input as it was: %v", err)
	}
	if got := o.committedLines(t); !slices.Equal(got, lines) {
		t.Errorf("the output is not the input: %d lines, want %d", len(got), len(lines))
	}
}

// TestFinishedJobRefusesOtherInput runs the copy job to its end, then
// again: on the same input it says it is done; on another path, or with a
// file changed, it fails and points to run --fresh.
func TestFinishedJobRefusesOtherInput(t *testing.T) {
	dir := t.TempDir()
	a, _ := numberedLines("a", 50)
	b, _ := numberedLines("b", 70)
	writeInput(t, filepath.Join(dir, "in", "a.txt"), a)
	writeInput(t, filepath.Join(dir, "in", "b.txt"), b)
	writeInput(t, filepath.Join(dir, "in2", "c.txt"), a)
	o := &copyJob{dir: dir, path: filepath.Join(dir, "in"), p: 2}
	if _, err := o.run(t); err != nil {
		t.Fatal(err)
	}
	if _, err := o.run(t); err != nil {
		t.Fatalf("rerun on the same input: %v, want the job to say it is finished", err)
	}

	other := *o
	other.path = filepath.Join(dir, "in2")
	_, err := other.run(t)
	var fatal *fault.Fatal
	if !errors.As(err, &fatal) {
		t.Fatalf("rerun on another path: %v, want a fatal error", err)
	}
	for _, want := range []string{"is final", "sources.in: the job read " + filepath.Join(dir, "in", "a.txt") + ", " + filepath.Join(dir, "in", "b.txt"), "now gives " + filepath.Join(dir, "in2", "c.txt"), "run with --fresh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not say %q", err, want)
		}
	}

	writeInput(t, filepath.Join(dir, "in", "b.txt"), b+"b 0070\n")
	_, err = o.run(t)
	if !errors.As(err, &fatal) {
		t.Fatalf("rerun on a grown file: %v, want a fatal error", err)
	}
	for _, want := range []string{filepath.Join(dir, "in", "b.txt") + " changed since it was read", "then 490 bytes", "now 497 bytes", "run with --fresh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\ndoes not say %q", err, want)
		}
	}
}
