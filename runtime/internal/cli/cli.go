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
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/pipegen/pipegen/runtime/catalog"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/storage"
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
	os.Exit(run(p, os.Args[1:], os.Stdout, os.Stderr))
}

// Run is the same command line for a pipeline generated into the user's
// package (pipegen generate from //pipegen: directives): args are the
// arguments without the program's name, and Run returns the exit status
// (0 done, 1 failed, 2 wrong command line) instead of exiting, so that the
// user's own main decides what happens next.
func Run(p Program, args []string) int {
	return run(p, args, os.Stdout, os.Stderr)
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

func run(p Program, args []string, stdout, stderr io.Writer) int {
	name := p.Config.Name
	if len(args) == 0 {
		fmt.Fprintf(stderr, "usage: %s run [flags]\nrun '%s run --help' for the flags\n", name, name)
		return exitUsage
	}
	switch args[0] {
	case "run":
	case "checkpoints":
		return listCheckpoints(p.Config, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout, p.Config)
		return exitOK
	default:
		fmt.Fprintf(stderr, "%s: unknown command %q: the commands are run and checkpoints (see '%s --help')\n", name, args[0], name)
		return exitUsage
	}

	cfg := p.Config.Clone()
	for i := range cfg.Nodes {
		cfg.Nodes[i].ParallelismSet = cfg.Nodes[i].Parallelism != 0
	}
	fs := flag.NewFlagSet(name+" run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	parallelism := fs.Int("parallelism", 0, "")
	checkpointDir := fs.String("checkpoint-dir", "", "")
	fromCheckpoint := fs.String("from-checkpoint", "", "")
	quiet := fs.Bool("quiet", false, "")
	cpuProfile := fs.String("cpuprofile", "", "")
	eventsFile := fs.String("events", "", "")
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
	if given["parallelism"] {
		if *parallelism < 1 {
			fmt.Fprintf(stderr, "%s run: --parallelism wants a whole number of at least 1, got %d\n", name, *parallelism)
			bad = true
		}
		cfg.Parallelism = *parallelism
	}
	if given["checkpoint-dir"] {
		if *checkpointDir == "" {
			fmt.Fprintf(stderr, "%s run: --checkpoint-dir must not be empty\n", name)
			bad = true
		}
		cfg.Checkpoint.Dir = *checkpointDir
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
	var ev *events.Writer
	if *eventsFile != "" {
		w, c, err := events.Create(*eventsFile, name)
		if err != nil {
			fmt.Fprintf(stderr, "%s run: --events: %v\n", name, err)
			return exitUsage
		}
		defer c.Close()
		ev = w
	}
	ev.Emit(events.Event{Kind: events.Start})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	r := job.NewRestarter(cfg.Restart)
	from := *fromCheckpoint
	for {
		opts := job.Options{Log: stderr, Quiet: *quiet, From: from, Events: ev}
		if !*quiet {
			opts.Progress = stderr
		}
		j := job.New(ctx, cfg, opts)
		err := j.Run(p.Build)
		if err == nil {
			ev.Emit(events.Event{Kind: events.Done, Records: j.RecordsRead()})
			if !*quiet {
				fmt.Fprintf(stderr, "%s: done in %s: %s\n", name, time.Since(start).Round(time.Millisecond), j.Summary())
			}
			return exitOK
		}
		var fatal *fault.Fatal
		if errors.As(err, &fatal) || ctx.Err() != nil || cfg.Checkpoint.Mode == config.NoCheckpoints {
			ev.Emit(events.Event{Kind: events.Fail, Error: firstLine(err)})
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return exitFail
		}
		delay, why, ok := r.Next(time.Now())
		if !ok {
			ev.Emit(events.Event{Kind: events.Fail, Error: firstLine(err)})
			fmt.Fprintf(stderr, "%s: %v\n%s: giving up: %s\n", name, err, name, why)
			return exitFail
		}
		ev.Emit(events.Event{Kind: events.Restart, Error: firstLine(err), Delay: delay, Attempt: r.Restarts()})
		fmt.Fprintf(stderr, "%s: %v\n%s: restarting in %s from the newest checkpoint in %s (%s)\n", name, err, name, delay, cfg.Checkpoint.Dir, r.AttemptsText())
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return exitFail
		}
		// A restart resumes from the newest checkpoint, which may be one
		// the failed attempt took.
		from = ""
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

Flags of run:
  --parallelism N        subtasks per node, for every node without a parallelism
                         of its own (default %[3]d)
  --checkpoint-dir DIR   where checkpoints are kept (default %[4]q); run resumes
                         from the newest complete one there
  --from-checkpoint DIR  resume from this checkpoint (a chk-NNNNNN folder)
  --set KEY=VALUE        override a setting by its path in the pipeline file;
                         may be given many times
  --quiet                no progress lines on standard error
  --cpuprofile FILE      write a CPU profile (go tool pprof) of the run
  --events FILE          append machine-readable events (JSON lines: start,
                         resume, checkpoint, restart, fail, done) to FILE

Settings for --set (compiled value in brackets):
`, cfg.Name, cfg.Source, cfg.Parallelism, cfg.Checkpoint.Dir)
	var lines []string
	add := func(key, value, doc string) {
		lines = append(lines, fmt.Sprintf("  %-34s %s [%s]", key, doc, value))
	}
	add("parallelism", fmt.Sprint(cfg.Parallelism), "default subtasks per node")
	add("max-parallelism", fmt.Sprint(cfg.MaxParallelism), "key groups; keep it for the life of the state")
	add("checkpoint.mode", cfg.Checkpoint.Mode, "exactly-once, at-least-once or none")
	add("checkpoint.interval", cfg.Checkpoint.Interval.String(), "time between checkpoints")
	add("checkpoint.timeout", cfg.Checkpoint.Timeout.String(), "a checkpoint not done by then is given up")
	add("checkpoint.min-pause", cfg.Checkpoint.MinPause.String(), "least time between two checkpoints")
	add("checkpoint.retain", fmt.Sprint(cfg.Checkpoint.Retain), "completed checkpoints kept")
	add("checkpoint.dir", cfg.Checkpoint.Dir, "same as --checkpoint-dir")
	rs := cfg.Restart
	add("restart.strategy", rs.Strategy, "fixed-delay, failure-rate, exponential-backoff or none")
	add("restart.attempts", fmt.Sprint(rs.Attempts), "restarts allowed by fixed-delay and exponential-backoff; 0 for no limit")
	add("restart.delay", rs.Delay.String(), "wait before a restart (the first, for exponential-backoff)")
	add("restart.max-delay", rs.MaxDelay.String(), "exponential-backoff: longest wait")
	add("restart.multiplier", fmt.Sprint(rs.Multiplier), "exponential-backoff: growth of the wait per failure")
	add("restart.max-failures", fmt.Sprint(rs.MaxFailures), "failure-rate: failures within restart.interval before giving up")
	add("restart.interval", rs.Interval.String(), "failure-rate: the window failures are counted in")
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
		var conn *catalog.Connector
		if conn = n.Catalog(); conn == nil {
			continue
		}
		for _, o := range conn.Options {
			if o.Static || n.Format != "" && !o.AppliesTo(n.Format) {
				continue
			}
			v, ok := n.Options[o.Name]
			if !ok {
				v = o.Default
			}
			add(prefix+o.Name, v, o.Doc)
		}
	}
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}
