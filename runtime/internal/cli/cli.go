// Package cli is the command line of a generated program: `run` with its
// flags and --set overrides, restarts after failures, and `checkpoints`,
// which lists a checkpoint directory.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/logs"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/settings"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// Program is what a generated main package hands to Main: the compiled
// settings and the function that wires a run of the job.
type Program struct {
	Config *config.Config
	// Build starts every subtask of the job on j with j.Go.
	Build func(j *job.Job)
}

// Main is the generated program's command line. It never returns.
func Main(p Program) {
	keepHeapFloor() // the process is the job's: Run leaves the user's own alone
	os.Exit(run(p, os.Args[1:], os.Stdout, os.Stderr, notify()))
}

// Run is the same command line for a pipeline generated into the user's
// package (pipegen generate from //pipegen: directives): args are the
// arguments without the program's name, and Run returns the exit status
// (0 done, 1 failed, 2 wrong command line) instead of exiting, so that the
// user's own main decides what happens next.
func Run(p Program, args []string) int {
	return run(p, args, os.Stdout, os.Stderr, notify())
}

// Exit codes of a generated program.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// notify delivers the signals that stop a job: SIGTERM, which orchestrators
// send before SIGKILL, and SIGINT (Ctrl-C).
func notify() <-chan os.Signal {
	c := make(chan os.Signal, 2)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	return c
}

// DefaultStopTimeout bounds the stop that a signal starts: Kubernetes, for
// one, sends SIGKILL 30 s after SIGTERM.
const DefaultStopTimeout = 20 * time.Second

func run(p Program, args []string, stdout, stderr io.Writer, signals <-chan os.Signal) int {
	name := p.Config.Name
	if len(args) == 0 {
		fmt.Fprintf(stderr, "usage: %s run [flags]\nrun '%s run --help' for the flags\n", name, name)
		return exitUsage
	}
	switch args[0] {
	case "run":
	case "checkpoints":
		return listCheckpoints(p.Config, args[1:], stdout, stderr)
	case "savepoint", "stop":
		return savepointCommand(p.Config, args[0], args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout, p.Config)
		return exitOK
	default:
		fmt.Fprintf(stderr, "%s: unknown command %q: the commands are run, checkpoints, savepoint and stop (see '%s --help')\n", name, args[0], name)
		return exitUsage
	}

	cfg := p.Config.Clone()
	for i := range cfg.Nodes {
		cfg.Nodes[i].ParallelismSet = cfg.Nodes[i].Parallelism != 0
	}
	fs := flag.NewFlagSet(name+" run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("parallelism", "", "")
	fs.String("checkpoint-dir", "", "")
	fromCheckpoint := fs.String("from-checkpoint", "", "")
	fromSavepoint := fs.String("from-savepoint", "", "")
	fresh := fs.Bool("fresh", false, "")
	allowNonRestored := fs.Bool("allow-non-restored-state", false, "")
	quiet := fs.Bool("quiet", false, "")
	cpuProfile := fs.String("cpuprofile", "", "")
	memProfile := fs.String("memprofile", "", "")
	eventsFile := fs.String("events", "", "")
	stopTimeout := fs.Duration("stop-timeout", DefaultStopTimeout, "")
	httpAddr := fs.String("http", "", "")
	tokenFile := fs.String("http-token-file", "", "")
	logFormat := fs.String("log-format", logs.Text, "")
	var sets setFlags
	fs.Var(&sets, "set", "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, p.Config)
			return exitOK
		}
		fmt.Fprintf(stderr, "%s run: %v\nrun '%s run --help' for the flags\n", name, err, name)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s run: unexpected argument %q: options go through --set KEY=VALUE\n", name, fs.Arg(0))
		return exitUsage
	}
	bad := false
	for _, kv := range sets {
		if err := cfg.Set(kv); err != nil {
			fmt.Fprintf(stderr, "%s run: %v\n", name, err)
			bad = true
		}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// The two flags are --set of their settings, applied last.
	for _, f := range [][2]string{{"parallelism", "parallelism"}, {"checkpoint-dir", "checkpoint.dir"}} {
		flag, key := f[0], f[1]
		if !given[flag] {
			continue
		}
		if err := cfg.Set(key + "=" + fs.Lookup(flag).Value.String()); err != nil {
			fmt.Fprintf(stderr, "%s run: --%s: %v\n", name, flag, errors.Unwrap(err))
			bad = true
		}
	}
	if *fresh && (*fromCheckpoint != "" || *fromSavepoint != "") {
		fmt.Fprintf(stderr, "%s run: --fresh starts over, --from-checkpoint and --from-savepoint resume: give one of them\n", name)
		bad = true
	}
	if *fromCheckpoint != "" && *fromSavepoint != "" {
		fmt.Fprintf(stderr, "%s run: give --from-checkpoint or --from-savepoint, not both\n", name)
		bad = true
	}
	if bad {
		return exitUsage
	}
	if err := cfg.Resolve(); err != nil {
		fmt.Fprintf(stderr, "%s run: %v\n", name, err)
		return exitUsage
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "%s run: --cpuprofile: %v\n", name, err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "%s run: --cpuprofile: %v\n", name, err)
			return exitUsage
		}
		defer pprof.StopCPUProfile()
	}
	if *memProfile != "" {
		// Created now, so that a path that cannot be written is a usage
		// error before the job runs, not after.
		f, err := os.Create(*memProfile)
		if err != nil {
			fmt.Fprintf(stderr, "%s run: --memprofile: %v\n", name, err)
			return exitUsage
		}
		defer writeMemProfile(f, name, stderr)
	}
	log, err := logs.New(stderr, *logFormat, name)
	if err != nil {
		fmt.Fprintf(stderr, "%s run: %v\n", name, err)
		return exitUsage
	}
	reg := metrics.New(cfg)
	ev := events.NewWriter(nil, name)
	if *eventsFile != "" {
		w, c, err := events.Create(*eventsFile, name)
		if err != nil {
			fmt.Fprintf(stderr, "%s run: --events: %v\n", name, err)
			return exitUsage
		}
		defer c.Close()
		ev = w
	}
	ev.Tap(reg.Event)
	if *httpAddr != "" {
		srv, code := serve(name, *httpAddr, *tokenFile, reg, log, stderr)
		if srv == nil {
			return code
		}
		defer srv.Close()
	}
	ev.Emit(events.Event{Kind: events.Start})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sv := &supervisor{name: name, log: log, ev: ev, timeout: *stopTimeout, cancel: cancel, stopping: make(chan struct{})}
	go sv.watch(ctx, signals)
	start := time.Now()
	r := job.NewRestarter(cfg.Restart)
	from, isSavepoint := *fromCheckpoint, false
	if *fromSavepoint != "" {
		from, isSavepoint = *fromSavepoint, true
	}
	ctl := &controlEndpoint{sv: sv, dir: cfg.Checkpoint.Dir, mode: cfg.Checkpoint.Mode}
	defer ctl.close()
	for {
		opts := job.Options{FromSavepoint: isSavepoint, Started: ctl.start, Log: stderr, Logger: log, Quiet: *quiet, From: from, Events: ev, Fresh: *fresh, Metrics: reg,
			AllowNonRestoredState: *allowNonRestored}
		if !*quiet {
			opts.Progress = stderr
		}
		j := job.New(ctx, cfg, opts)
		sv.running(j)
		err := j.Run(p.Build)
		reg.EndAll()
		var stopped *job.Stopped
		switch {
		case err == nil:
			reg.SetState(metrics.Finished)
			ev.Emit(events.Event{Kind: events.Done, Records: j.RecordsRead(), Malformed: j.MalformedRecords(), Dropped: drops(reg)})
			if !*quiet {
				log.Info(fmt.Sprintf("done in %s: %s", time.Since(start).Round(time.Millisecond), j.Summary()))
			}
			summary(log, reg)
			return exitOK
		case errors.As(err, &stopped):
			reg.SetState(metrics.Stopped)
			ev.Emit(events.Event{Kind: events.Stop, Checkpoint: stopped.Checkpoint, Records: j.RecordsRead()})
			log.Info(fmt.Sprintf("stopped at checkpoint %d, its output committed; run again to resume from it", stopped.Checkpoint))
			summary(log, reg)
			return exitOK
		}
		var fatal *fault.Fatal
		if errors.As(err, &fatal) || ctx.Err() != nil || sv.stopRequested() || cfg.Checkpoint.Mode == config.NoCheckpoints {
			if cause := context.Cause(ctx); cause != nil {
				err = cause
			}
			reg.SetState(metrics.Failed)
			reg.Fail(failure(err, false))
			ev.Emit(events.Event{Kind: events.Fail, Error: firstLine(err)})
			logError(log, err)
			return exitFail
		}
		delay, why, ok := r.Next(time.Now())
		if !ok {
			reg.SetState(metrics.Failed)
			reg.Fail(failure(err, false))
			ev.Emit(events.Event{Kind: events.Fail, Error: firstLine(err)})
			logError(log, err)
			log.Error("giving up: " + why)
			return exitFail
		}
		reg.SetState(metrics.Restarting)
		reg.Fail(failure(err, true))
		ev.Emit(events.Event{Kind: events.Restart, Error: firstLine(err), Delay: delay, Attempt: r.Restarts()})
		logError(log, err)
		log.Warn(fmt.Sprintf("restarting in %s from the newest checkpoint in %s (%s)", delay, cfg.Checkpoint.Dir, r.AttemptsText()))
		select {
		case <-time.After(delay):
		case <-sv.stopping:
			log.Error(fmt.Sprintf("stopped while waiting to restart; the next run resumes from the newest checkpoint in %s", cfg.Checkpoint.Dir))
			return exitFail
		case <-ctx.Done():
			return exitFail
		}
		// A restart resumes from the newest checkpoint, which may be one
		// the failed attempt took.
		from, isSavepoint, *fresh = "", false, false
	}
}

// writeMemProfile writes the allocation profile of the run into f: every
// sampled allocation since the program started (pprof's alloc_space and
// alloc_objects), and what of it was still live at the last collection
// (inuse_space, inuse_objects).
func writeMemProfile(f *os.File, name string, stderr io.Writer) {
	// The profile's live figures are those of the last collection: one
	// now makes them the run's end.
	runtime.GC()
	err := pprof.Lookup("allocs").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s run: --memprofile: %v\n", name, err)
	}
}

// supervisor turns signals into a stop of the running job: the first one
// asks it to stop at a checkpoint taken now, which ends it cleanly; a
// second one, or the timeout, cancels it at once.
type supervisor struct {
	name    string
	log     *slog.Logger
	ev      *events.Writer
	timeout time.Duration
	cancel  context.CancelCauseFunc
	// stopping is closed on the first signal.
	stopping chan struct{}

	mu  sync.Mutex
	cur *job.Job
}

// running makes j the job a signal stops; one that came already stops it
// at once.
func (s *supervisor) running(j *job.Job) {
	s.mu.Lock()
	s.cur = j
	s.mu.Unlock()
	if s.stopRequested() {
		j.Stop()
	}
}

func (s *supervisor) stopRequested() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}

func (s *supervisor) watch(ctx context.Context, signals <-chan os.Signal) {
	var sig os.Signal
	select {
	case sig = <-signals:
	case <-ctx.Done():
		return
	}
	s.log.Warn(fmt.Sprintf("%v: stopping at a checkpoint taken now (within %s; %v again stops at once)", sig, s.timeout, sig))
	close(s.stopping)
	s.mu.Lock()
	j := s.cur
	s.mu.Unlock()
	if j != nil {
		j.Stop()
	}
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case again := <-signals:
		s.cancel(fmt.Errorf("stopped at once by a second %v: the next run resumes from the newest checkpoint", again))
	case <-t.C:
		s.cancel(fmt.Errorf("no checkpoint completed within %s of %v (--stop-timeout): stopped at once; the next run resumes from the newest checkpoint", s.timeout, sig))
	case <-ctx.Done():
	}
}

// firstLine is the first line of an error's message: a panic's carries the
// record and the stack after it.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// listCheckpoints prints the checkpoints of a checkpoint directory.
func listCheckpoints(cfg *config.Config, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(cfg.Name+" checkpoints", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("checkpoint-dir", cfg.Checkpoint.Dir, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "usage: %s checkpoints [--checkpoint-dir DIR]\n", cfg.Name)
		return exitUsage
	}
	st := &storage.Storage{FS: vfs.Default, Dir: *dir}
	entries, err := st.List()
	if err != nil {
		fmt.Fprintf(stderr, "%s checkpoints: %v\n", cfg.Name, err)
		return exitFail
	}
	if len(entries) == 0 {
		fmt.Fprintf(stdout, "no checkpoints in %s\n", *dir)
		return exitOK
	}
	fmt.Fprintf(stdout, "%-8s %-20s %-10s %10s %10s %12s  %s\n", "ID", "TIME", "STATUS", "DURATION", "ALIGNMENT", "STATE", "PATH")
	for _, e := range entries {
		path := st.Path(e.ID)
		if !e.Complete {
			fmt.Fprintf(stdout, "%-8d %-20s %-10s %10s %10s %12s  %s\n", e.ID, "-", "incomplete", "-", "-", "-", path)
			continue
		}
		m, err := st.ReadManifest(e.ID)
		if err != nil {
			fmt.Fprintf(stdout, "%-8d %-20s %-10s %10s %10s %12s  %s (%v)\n", e.ID, "-", "damaged", "-", "-", "-", path, err)
			continue
		}
		status := "complete"
		if m.Final {
			status = "final"
		}
		fmt.Fprintf(stdout, "%-8d %-20s %-10s %10s %10s %12s  %s\n", m.ID, m.Time.Local().Format("2006-01-02 15:04:05"), status,
			m.Stats.Duration.Round(time.Millisecond), m.Stats.Alignment.Round(time.Microsecond), storage.Size(m.Stats.StateSize), path)
	}
	return exitOK
}

func usage(w io.Writer, cfg *config.Config) {
	fmt.Fprintf(w, `%[1]s: a stream processing job generated by pipegen from %[2]s

Usage:
  %[1]s run [flags]
  %[1]s checkpoints [--checkpoint-dir DIR]   list the checkpoints
  %[1]s savepoint [--checkpoint-dir DIR] [--savepoint-dir D]
                      ask the job running with DIR for a savepoint (default
                      folder DIR/savepoints); prints its path last
  %[1]s stop [--savepoint [--savepoint-dir D]] [--drain] [--checkpoint-dir DIR]
                      stop the job running with DIR at a checkpoint (with
                      --savepoint: at a savepoint, whose path it prints;
                      --drain: at a savepoint taken once the sources have
                      stopped reading and event time has run to its end)
  %[1]s savepoint inspect [--dump NODE] PATH
                      verify a savepoint and print its operators, uids,
                      schemas, key groups, sizes and source positions
                      (--dump: NODE's keyed state as JSON lines)

Flags of run:
  --parallelism N        subtasks per node, for every node without a parallelism
                         of its own (default %[3]d)
  --checkpoint-dir DIR   where checkpoints are kept (default %[4]q); run resumes
                         from the newest complete one there
  --from-checkpoint DIR  resume from this checkpoint (a chk-NNNNNN folder)
  --from-savepoint PATH  start from this savepoint (a savepoint-... folder,
                         which may have been moved or copied)
  --allow-non-restored-state
                         resume even when the checkpoint holds state of nodes
                         this version no longer has (it is left behind)
  --fresh                start over: the checkpoints and output of earlier runs
                         are moved aside (DIR/aside-TIME, OUT/.aside-TIME)
  --set KEY=VALUE        override a setting by its path in the pipeline file;
                         may be given many times
  --quiet                no progress lines on standard error
  --cpuprofile FILE      write a CPU profile (go tool pprof) of the run
  --memprofile FILE      write the run's allocations (go tool pprof) when it
                         ends
  --stop-timeout D       on SIGTERM or SIGINT the job stops at a checkpoint
                         taken then; after D (default 20s) it stops at once
  --events FILE          append machine-readable events (JSON lines: start,
                         resume, checkpoint, restart, stop, fail, done) to FILE
  --http ADDR            serve /metrics (Prometheus), a status page at /, and
                         /healthz, /readyz on ADDR (PORT or HOST:PORT; a port
                         alone listens on 127.0.0.1)
  --http-token-file FILE every request must carry the token in FILE
                         (Authorization: Bearer TOKEN, or ?token=TOKEN); an
                         address beyond loopback needs one (or
                         $PIPEGEN_HTTP_TOKEN)
  --log-format F         text (the default: NAME: MESSAGE) or json (one object
                         a line, with job, node and subtask)

Settings for --set (compiled value in brackets):
`, cfg.Name, cfg.Source, cfg.Parallelism, cfg.Checkpoint.Dir)
	var lines []string
	add := func(key, value, doc string) {
		lines = append(lines, fmt.Sprintf("  %-34s %s [%s]", key, doc, value))
	}
	for _, st := range settings.Overridable() {
		f, ok := cfg.Field(st.Path)
		if !ok {
			continue
		}
		add(st.Path, fmt.Sprint(f.Interface()), st.Help)
	}
	for _, n := range cfg.Nodes {
		prefix := n.Section + "." + n.Name + "."
		p := "default"
		if n.Parallelism != 0 {
			p = fmt.Sprint(n.Parallelism)
		}
		if n.FusedWith == "" {
			// A fused node has its head's parallelism: --set refuses it.
			add(prefix+"parallelism", p, "subtasks of "+n.Name)
		}
		conn := n.Catalog()
		if conn == nil {
			continue
		}
		for _, o := range conn.Options {
			if o.Static || n.Format != "" && !o.AppliesTo(n.Format) {
				continue
			}
			v, ok := n.Options[o.Path]
			if !ok {
				v = o.Default
			}
			add(prefix+o.Path, v, o.Help)
		}
	}
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}
