// Package verify checks exactly-once for a pipeline: it runs the
// pipeline's program once without failures and once with SIGKILLs at
// random moments (restarting it after each kill, so that it resumes from
// its newest complete checkpoint), and compares what the two runs
// committed. What each process did (resumed from a checkpoint, restarted
// its job after a failure) it learns from the program's events (`run
// --events`, package runtime/events), not from its log.
package verify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/buildprogress"
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/events"
)

// DefaultKills is the number of kills of Verify when Options.Kills
// is 0.
const DefaultKills = 5

// DefaultCleanTimeout bounds the clean run of Verify when
// Options.Timeout is 0.
const DefaultCleanTimeout = 10 * time.Minute

// maxShownLines is how many differing lines a report shows per sink and
// direction.
const maxShownLines = 5

// Options configure Verify.
type Options struct {
	// Kills is the number of SIGKILLs of the killed run; 0 means
	// DefaultKills.
	Kills int
	// Seed seeds the kill moments; 0 picks one from the clock. The report
	// carries the seed used, so that a failure can be replayed.
	Seed uint64
	// Parallelism is passed to every run as --parallelism; 0 keeps the
	// pipeline's.
	Parallelism int
	// Dir is the work directory: the program, and each run's checkpoints,
	// sink directories and logs. "" makes a temporary one, removed when
	// the outputs are identical and kept otherwise.
	Dir string
	// KeepInterval keeps the pipeline's checkpoint interval in the killed
	// run instead of one short enough for checkpoints between kills.
	KeepInterval bool
	// Sets are extra --set KEY=VALUE settings for every run.
	Sets []string
	// Timeout bounds the clean run; 0 means DefaultCleanTimeout. Each
	// process of the killed run is bounded by KilledTimeout.
	Timeout time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Verify compiles the pipeline file at path, runs the program once on its
// bounded input without failures and once with opt.Kills SIGKILLs at
// random moments, and compares the committed output of every file sink.
// An error means the verification could not be done (the pipeline does not
// compile, a run failed by itself or did not finish); a difference in the
// outputs is reported by the Report, not as an error.
func Verify(path string, opt Options) (*Report, error) {
	log := logger(opt.Log)
	dir, temp := opt.Dir, false
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "pipegen-verify-*"); err != nil {
			return nil, err
		}
		temp = true
	}
	log("building %s into %s", path, dir)
	// The progress of a long build from its start: loading the
	// pipeline's Go packages can take long too (a first load compiles
	// their dependencies).
	var progress *buildprogress.Progress
	if opt.Log != nil {
		progress = buildprogress.Start(opt.Log, path)
	}
	res, err := compile.Generate(path, compile.Options{}) // a program built to run and thrown away: nothing to record
	var v *Verifier
	if err == nil {
		v, err = newVerifier(res, dir, progress)
	}
	if progress != nil {
		progress.End(err)
	}
	if err != nil {
		if temp {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	v.Log = opt.Log
	rep, err := v.Verify(opt)
	switch {
	case err != nil:
		log("work directory kept: %s", dir)
	case temp && rep.Identical():
		os.RemoveAll(dir)
		rep.Dir = ""
	default:
		rep.Dir = dir
	}
	return rep, err
}

// A Verifier runs a compiled pipeline's program many times, each run in a
// directory of its own under Dir: the checkpoints in DIR/RUN/checkpoints,
// each file sink's output in DIR/RUN/sinks/NAME (set with --set
// sinks.NAME.path), the program's standard output and error in
// DIR/RUN/stdout.txt and stderr.txt, its events in DIR/RUN/events.jsonl.
// Input paths are left as configured:
// they resolve against the working directory.
type Verifier struct {
	// Binary is the program.
	Binary string
	// Pipeline is the pipeline's name.
	Pipeline string
	// Mode is the compiled checkpoint mode.
	Mode string
	// Dir holds the runs.
	Dir string
	// Sinks are the file sinks, whose committed output is compared.
	Sinks []string
	// Skipped are the other sinks, not compared: stdout sinks (not
	// transactional) and Kafka sinks (their output is in a topic).
	Skipped []string
	// Kafka are the skipped sinks that write to Kafka.
	Kafka []string
	// Headers are the file sinks whose part files each start with a
	// header line (csv with header true): their output is the lines
	// after it.
	Headers map[string]bool
	// Args are passed to every run, after the verifier's own.
	Args []string
	// Env holds KEY=VALUE pairs added to every run's environment, which
	// is otherwise this process's: a program whose functions read the
	// environment (Nexmark's generator) gets its settings here, so that
	// verifications with different ones may run at once.
	Env []string
	// Timeout bounds every process; 0 means no bound.
	Timeout time.Duration
	// CPUKills measures the kill moments in the CPU time each process has
	// used rather than in the wall time since its start. On a busy machine
	// a process can get little of a core between its start and a moment
	// drawn in wall time: kills then land before it has restored or
	// checkpointed anything, and the killed run proves nothing. CPU time
	// is the work the process has done, whatever the load. NewVerifier
	// sets it where CPUClock is true.
	CPUKills bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// CPUClock reports whether this system lets the verifier read a running
// process's CPU time (Linux does), which Verifier.CPUKills needs.
func CPUClock() bool {
	_, ok := processCPU(os.Getpid())
	return ok
}

// NewVerifier builds the program of res into dir and prepares runs of it.
func NewVerifier(res *compile.Result, dir string) (*Verifier, error) {
	return newVerifier(res, dir, nil)
}

// newVerifier is NewVerifier, which tells progress (when not nil) the
// steps of the build; the caller ends it.
func newVerifier(res *compile.Result, dir string, progress *buildprogress.Progress) (*Verifier, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	v := &Verifier{Binary: filepath.Join(abs, res.IR.Name), Pipeline: res.IR.Name, Mode: res.IR.Checkpoint.Mode, Dir: abs, CPUKills: CPUClock()}
	for _, n := range res.IR.Nodes {
		if n.Kind != ir.Sink {
			continue
		}
		switch n.Connector {
		case "file":
			v.Sinks = append(v.Sinks, n.Name)
			if h, set := n.Option("header"); n.Format == "csv" && (!set || h != "false") {
				if v.Headers == nil {
					v.Headers = map[string]bool{}
				}
				v.Headers[n.Name] = true
			}
		case "kafka":
			v.Skipped = append(v.Skipped, n.Name)
			v.Kafka = append(v.Kafka, n.Name)
		default:
			v.Skipped = append(v.Skipped, n.Name)
		}
	}
	if len(v.Sinks) == 0 {
		return nil, fmt.Errorf("pipeline %s has no file sink (stdout sinks are not transactional): there is no committed output to compare", res.IR.Name)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	if progress == nil {
		err = res.Build(v.Binary)
	} else {
		progress.Building()
		_, err = res.BuildWith(v.Binary, compile.BuildOptions{Progress: progress.Step})
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Verify runs the clean run ("clean") and the killed run ("killed") and
// compares them, as the package function Verify does.
func (v *Verifier) Verify(opt Options) (*Report, error) {
	log := logger(v.Log)
	kills := opt.Kills
	if kills <= 0 {
		kills = DefaultKills
	}
	seed := opt.Seed
	for seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rep := &Report{Pipeline: v.Pipeline, Seed: seed, Requested: kills, Skipped: v.Skipped}
	for _, s := range v.Skipped {
		if slices.Contains(v.Kafka, s) {
			log("warning: sinks.%s writes to Kafka, where both runs would write to one topic: it is skipped in the comparison (examples/kafka shows how to compare topics)", s)
			continue
		}
		log("warning: sinks.%s writes to standard output, which is not transactional: it is skipped in the comparison", s)
	}
	if v.Mode == "none" {
		log("warning: the pipeline's checkpoint.mode is none: after a crash it starts over, and its output is not expected to match")
	}
	var args []string
	if opt.Parallelism > 0 {
		args = append(args, "--parallelism", fmt.Sprint(opt.Parallelism))
	}
	var sets []string
	for _, s := range opt.Sets {
		sets = append(sets, "--set", s)
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultCleanTimeout
	}
	log("seed %d (replay with -seed %d)", seed, seed)
	clean, err := v.run("clean", nil, timeout, append(slices.Clip(args), sets...))
	if errors.Is(err, errTimeout) {
		return nil, fmt.Errorf("verify needs a job that ends (a bounded input; raise -timeout if it is only slow): %w", err)
	}
	if err != nil {
		return nil, err
	}
	rep.Clean = clean
	log("clean run: done in %s (%s of CPU time)", round(clean.Duration), round(clean.CPU))

	if !opt.KeepInterval {
		rep.Interval = CheckpointInterval(clean.Duration, kills)
		args = append(args, "--set", "checkpoint.interval="+rep.Interval.String())
		log("killed run: checkpoint interval %s", rep.Interval)
	}
	// The user's own settings come last: they win over the interval.
	args = append(args, sets...)
	// The kill moments are drawn over the clean run's CPU time (or its
	// duration: KillSpan). A killed run can still finish before its kills
	// (its restarts redo the work after their checkpoints, but a process
	// may also use less CPU for the same work than the clean one did), or
	// be killed only before its first checkpoint: then no restart resumed
	// and the run proved nothing. It is run again, up to twice, with the
	// moments drawn over half the span before; not with a Kafka sink,
	// whose topic would hold the output of both runs.
	span := v.KillSpan(clean)
	var killed *RunResult
	for try := 1; ; try++ {
		delays := KillDelays(rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), kills, span)
		var err error
		killed, err = v.run("killed", delays, KilledTimeout(clean.Duration), args)
		if err != nil {
			return nil, err
		}
		if killed.Resumed > 0 || try == 3 || len(v.Kafka) > 0 {
			break
		}
		span /= 2
		log("killed run: %d kills and no restart resumed from a checkpoint: again, with the kill moments drawn over %s of %s", killed.Kills, round(span), v.clock())
	}
	rep.Killed = killed
	log("killed run: done in %s after %d kills and %d restarts (%d resumed from a checkpoint)", round(killed.Duration), killed.Kills, killed.Restarts, killed.Resumed)
	if killed.Kills > 0 && killed.Resumed == 0 {
		log("warning: no restarted process resumed from a checkpoint: the kills came before any checkpoint completed; give the job more input (or slow a generator down with -set sources.NAME.rate=...) so that the clean run lasts a few seconds")
	}
	for _, s := range v.Sinks {
		d := CompareLines(clean.Output[s], killed.Output[s], maxShownLines)
		d.Sink = s
		d.CleanLines, d.KilledLines = len(clean.Output[s]), len(killed.Output[s])
		rep.Sinks = append(rep.Sinks, d)
	}
	return rep, nil
}

// KillSpan is the span a killed run's kill moments are drawn over
// (KillDelays), given the clean run: with CPUKills the CPU time it used
// after its start (Startup excluded, as it is from each kill's moment),
// else its duration.
func (v *Verifier) KillSpan(clean *RunResult) time.Duration {
	if v.CPUKills {
		return clean.CPU - clean.Startup
	}
	return clean.Duration
}

// clock names what the kill moments are measured in, for the log.
func (v *Verifier) clock() string {
	if v.CPUKills {
		return "CPU time"
	}
	return "wall time"
}

// KilledTimeout bounds each process of a killed run, given the duration
// of the clean run: 20 times it plus 30 s.
func KilledTimeout(clean time.Duration) time.Duration { return 20*clean + 30*time.Second }

// CheckpointInterval is the checkpoint interval of a killed run, given the
// duration of the clean run and the number of kills: a third of the mean
// time between two kills, clean/(3*(kills+1)), within [20ms, 1s], so that
// a process killed after the mean time has completed a checkpoint or two
// after its restore. (A tenth of the clean run, as it was, gave 6 kills a
// checkpoint or less each: most processes died before their first one.)
func CheckpointInterval(clean time.Duration, kills int) time.Duration {
	return min(max(clean/time.Duration(3*(max(kills, 1)+1)), 20*time.Millisecond), time.Second).Round(time.Millisecond)
}

// KillDelays draws the kill moments of a killed run: n moments uniformly
// in [0, span) (span is the clean run's KillSpan), sorted; the i-th
// process is killed when it has run for the gap between moments i-1 and
// i (the first one at the first moment), in CPU time or wall time as
// Verifier.CPUKills says. The kills are spread over the run
// like points on its timeline, and, since a restarted process redoes the
// work after its last checkpoint, they all land before the job can finish.
func KillDelays(rng *rand.Rand, n int, span time.Duration) []time.Duration {
	if span <= 0 {
		span = time.Millisecond
	}
	at := make([]time.Duration, n)
	for i := range at {
		at[i] = time.Duration(rng.Int64N(int64(span)))
	}
	slices.Sort(at)
	delays := make([]time.Duration, n)
	prev := time.Duration(0)
	for i, t := range at {
		delays[i] = t - prev
		prev = t
	}
	return delays
}

// RunResult is one run of the program, killed or not.
type RunResult struct {
	Name string
	// Dir is the run's directory.
	Dir string
	// Duration is the wall time from the first start to the exit 0,
	// restarts included.
	Duration time.Duration
	// CPU is the CPU time (user and system) its processes used, all of
	// them together; with CPUKills, Startup is the part of it used before
	// each process announced its start (its start event: the runtime's
	// and the program's initialisation, before the job's own work).
	CPU, Startup time.Duration
	// Kills counts the processes killed; Restarts the processes started
	// after the first.
	Kills, Restarts int
	// Resumed counts the processes that resumed from a checkpoint (as
	// their events say).
	Resumed int
	// Failures counts the times the job failed by itself and the program
	// restarted it in-process (its restart strategy), as its events say;
	// FirstFailure is the first such failure.
	Failures     int
	FirstFailure string
	// Output holds the committed lines of every file sink, sorted.
	Output map[string][]string
}

// Run runs the program once, to its end, and reads its committed output.
// args come after the verifier's own.
func (v *Verifier) Run(name string, args ...string) (*RunResult, error) {
	return v.RunWithKills(name, nil, args...)
}

// RunWithKills starts the program and kills it with SIGKILL when its i-th
// process has run for delays[i] (CPU time with CPUKills, else wall time
// since its start), restarting the same command line after each kill,
// until a process exits 0; then it reads the committed output. A process
// that ends before its kill ends the run: Kills may be lower than
// len(delays). A process that exits with an error, or does not finish
// within v.Timeout, is an error.
func (v *Verifier) RunWithKills(name string, delays []time.Duration, args ...string) (*RunResult, error) {
	return v.run(name, delays, v.Timeout, args)
}

func (v *Verifier) run(name string, delays []time.Duration, timeout time.Duration, args []string) (*RunResult, error) {
	log := logger(v.Log)
	dir := filepath.Join(v.Dir, name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	eventsFile := filepath.Join(dir, "events.jsonl")
	cmdArgs := []string{"run", "--checkpoint-dir", filepath.Join(dir, "checkpoints"), "--events", eventsFile}
	for _, s := range v.Sinks {
		cmdArgs = append(cmdArgs, "--set", "sinks."+s+".path="+v.sinkDir(name, s))
	}
	cmdArgs = append(cmdArgs, v.Args...)
	cmdArgs = append(cmdArgs, args...)
	stdout, err := os.Create(filepath.Join(dir, "stdout.txt"))
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr.txt"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()

	r := &RunResult{Name: name, Dir: dir}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			r.Restarts++
			log("%s run: restart %d", name, r.Restarts)
		}
		killAfter := time.Duration(-1)
		if attempt <= len(delays) {
			killAfter = delays[attempt-1]
		}
		// The last kill waits, if need be, until the process has
		// completed a checkpoint: on a slow machine every drawn moment can
		// come before the first checkpoint, and no restart would resume.
		a, err := v.attempt(cmdArgs, eventsFile, killAfter, attempt == len(delays), timeout, stdout, stderr, attempt)
		r.CPU += a.cpu
		r.Startup += a.startup
		if err != nil {
			return nil, fmt.Errorf("%s run, process %d: %w (see %s)", name, attempt, err, dir)
		}
		if !a.killed {
			break
		}
		r.Kills++
		if v.CPUKills {
			log("%s run: kill %d/%d: process %d killed after %s of CPU time from its start event, %s after its start", name, r.Kills, len(delays), attempt, round(a.cpu-a.startup), round(a.wall))
		} else {
			log("%s run: kill %d/%d: process %d killed %s after its start", name, r.Kills, len(delays), attempt, round(killAfter))
		}
	}
	r.Duration = time.Since(start)
	evs, err := events.ReadFile(eventsFile)
	if err != nil {
		return nil, fmt.Errorf("%s run: %w", name, err)
	}
	r.count(evs)
	if r.Kills < len(delays) {
		log("%s run: the job finished before kill %d/%d", name, r.Kills+1, len(delays))
	}
	if r.Failures > 0 {
		log("warning: %s run: the job failed by itself %d times and was restarted by the program; first: %s", name, r.Failures, r.FirstFailure)
	}
	r.Output = map[string][]string{}
	for _, s := range v.Sinks {
		lines, err := readCommitted(v.sinkDir(name, s), v.Headers[s])
		if err != nil {
			return nil, fmt.Errorf("%s run: sinks.%s: %w", name, s, err)
		}
		r.Output[s] = lines
	}
	return r, nil
}

func (v *Verifier) sinkDir(run, sink string) string {
	return filepath.Join(v.Dir, run, "sinks", sink)
}

// attempted is what became of one process.
type attempted struct {
	// killed reports that the kill ended it.
	killed bool
	// cpu is the CPU time it used, startup the part of it before its
	// start event (with CPUKills); wall the time from its start to its end.
	cpu, startup, wall time.Duration
}

// attempt runs one process, killing it when it has run for killAfter
// (with CPUKills CPU time from its start event, else wall time from its
// start) unless that is negative; with waitCheckpoint, not before it has
// completed a checkpoint. eventsFile is its --events file. An error
// carries the end of the process's standard error.
func (v *Verifier) attempt(args []string, eventsFile string, killAfter time.Duration, waitCheckpoint bool, timeout time.Duration, stdout, stderr *os.File, n int) (a attempted, err error) {
	fmt.Fprintf(stderr, "=== process %d: %s %s\n", n, v.Binary, strings.Join(args, " "))
	offset, err := stderr.Seek(0, io.SeekCurrent)
	if err != nil {
		return a, err
	}
	defer func() {
		if err == nil {
			return
		}
		if out, rerr := readFrom(stderr.Name(), offset); rerr == nil {
			err = fmt.Errorf("%w; its standard error ends with:\n%s", err, tail(out, 20))
		}
	}()
	cmd := exec.Command(v.Binary, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if len(v.Env) > 0 {
		cmd.Env = append(os.Environ(), v.Env...)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return a, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// ended records what the process used, once Wait has returned.
	ended := func() {
		a.wall = time.Since(start)
		a.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	pid := cmd.Process.Pid
	var kill, cpuPoll, expire <-chan time.Time
	started := false // with CPUKills: the process's start event was seen
	if v.CPUKills {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		cpuPoll = t.C
	} else if killAfter >= 0 {
		t := time.NewTimer(killAfter)
		defer t.Stop()
		kill = t.C
	}
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	var checkpointPoll <-chan time.Time
	for {
		due := false
		select {
		case err := <-done:
			ended()
			return a, exitError(err)
		case <-kill:
			kill, due = nil, true
		case <-cpuPoll:
			used, ok := processCPU(pid)
			if !started && ok {
				// Its initialisation (the Go runtime's, the program's
				// flags and files) is not the job's work: the kill's CPU
				// time counts from the start event.
				if !hasEvent(eventsFile, pid, events.Start) {
					continue
				}
				started, a.startup = true, used
			}
			if killAfter < 0 {
				cpuPoll = nil
				continue
			}
			// A process that is gone (ok false) has ended: done says how.
			if ok && used-a.startup < killAfter {
				continue
			}
			cpuPoll, due = nil, true
		case <-checkpointPoll:
			if !checkpointed(eventsFile, pid) {
				continue
			}
		case <-expire:
			cmd.Process.Kill()
			<-done
			ended()
			return a, fmt.Errorf("%w within %s", errTimeout, timeout)
		}
		if due && waitCheckpoint && !checkpointed(eventsFile, pid) {
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			checkpointPoll = t.C
			continue
		}
		break
	}
	cmd.Process.Kill()
	err = <-done
	ended()
	if err == nil {
		return a, nil // it finished just before
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		a.killed = true // ended by the signal
		return a, nil
	}
	return a, exitError(err)
}

// checkpointed reports whether process pid has completed a checkpoint, as
// the events file says.
func checkpointed(eventsFile string, pid int) bool {
	return hasEvent(eventsFile, pid, events.Checkpoint)
}

// hasEvent reports whether the events file has an event of kind from
// process pid.
func hasEvent(eventsFile string, pid int, kind events.Kind) bool {
	evs, _ := events.ReadFile(eventsFile)
	return slices.ContainsFunc(evs, func(e events.Event) bool { return e.PID == pid && e.Kind == kind })
}

// count takes from a run's events the processes that resumed from a
// checkpoint and the failures after which the program restarted the job.
func (r *RunResult) count(evs []events.Event) {
	resumed := map[int]bool{}
	for _, e := range evs {
		switch e.Kind {
		case events.Resume:
			resumed[e.PID] = true
		case events.Restart:
			r.Failures++
			if r.FirstFailure == "" {
				r.FirstFailure = e.Error
			}
		}
	}
	r.Resumed = len(resumed)
}

// errTimeout is the error of a process that did not end in time.
var errTimeout = errors.New("did not finish")

func exitError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("ended with %s", ee.ProcessState)
	}
	return err
}

func readFrom(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// tail returns the last n lines of out, indented.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\t" + strings.Join(lines, "\n\t")
}

// ReadCommitted returns the committed output of a file sink: the lines of
// the files in dir whose names do not start with '.', sorted. A missing
// directory has no lines.
func ReadCommitted(dir string) ([]string, error) { return readCommitted(dir, false) }

// readCommitted is ReadCommitted, without the first line of each file
// when header is set; those lines must all be the same header.
func readCommitted(dir string, header bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lines []string
	var headerLine *string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		first := header
		for sc.Scan() {
			if first {
				first = false
				if headerLine == nil {
					headerLine = new(string)
					*headerLine = sc.Text()
				} else if sc.Text() != *headerLine {
					f.Close()
					return nil, fmt.Errorf("%s starts with header %q, and another part file with %q", e.Name(), sc.Text(), *headerLine)
				}
				continue
			}
			lines = append(lines, sc.Text())
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
	}
	slices.Sort(lines)
	return lines, nil
}

// LineDiff is the difference between two multisets of lines.
type LineDiff struct {
	// Sink names the sink compared, in a Report.
	Sink string
	// CleanLines and KilledLines count the lines of the two runs, in a
	// Report.
	CleanLines, KilledLines int
	// Missing counts the lines of want that got lacks (a line twice in
	// want and once in got is missing once); Extra the lines of got that
	// want lacks.
	Missing, Extra int
	// FirstMissing and FirstExtra are the first of them, in sorted order.
	FirstMissing, FirstExtra []string
}

// Equal reports whether the two multisets are the same.
func (d LineDiff) Equal() bool { return d.Missing == 0 && d.Extra == 0 }

// CompareLines compares two sorted lists of lines as multisets, keeping up
// to show differing lines in each direction.
func CompareLines(want, got []string, show int) LineDiff {
	var d LineDiff
	missing := func(s string) {
		d.Missing++
		if len(d.FirstMissing) < show {
			d.FirstMissing = append(d.FirstMissing, s)
		}
	}
	extra := func(s string) {
		d.Extra++
		if len(d.FirstExtra) < show {
			d.FirstExtra = append(d.FirstExtra, s)
		}
	}
	i, k := 0, 0
	for i < len(want) && k < len(got) {
		switch {
		case want[i] == got[k]:
			i++
			k++
		case want[i] < got[k]:
			missing(want[i])
			i++
		default:
			extra(got[k])
			k++
		}
	}
	for ; i < len(want); i++ {
		missing(want[i])
	}
	for ; k < len(got); k++ {
		extra(got[k])
	}
	return d
}

// Report is the outcome of a verification.
type Report struct {
	Pipeline string
	// Seed seeded the kill moments.
	Seed uint64
	// Requested is the number of kills asked for.
	Requested int
	// Interval is the killed run's checkpoint interval, 0 when the
	// pipeline's was kept.
	Interval time.Duration
	// Clean and Killed are the two runs.
	Clean, Killed *RunResult
	// Sinks compare the file sinks' committed output, clean run as want.
	Sinks []LineDiff
	// Skipped are the stdout sinks, not compared.
	Skipped []string
	// Dir is the work directory when it is kept.
	Dir string
}

// Identical reports whether every file sink committed the same lines in
// both runs.
func (r *Report) Identical() bool {
	for _, d := range r.Sinks {
		if !d.Equal() {
			return false
		}
	}
	return true
}

// String renders the report for people.
func (r *Report) String() string {
	var b strings.Builder
	verdict := "is identical to"
	if !r.Identical() {
		verdict = "DIFFERS from"
	}
	fmt.Fprintf(&b, "%s: committed output after %d kills and %d restarts %s the clean run's (seed %d)\n",
		r.Pipeline, r.Killed.Kills, r.Killed.Restarts, verdict, r.Seed)
	if r.Killed.Kills < r.Requested {
		fmt.Fprintf(&b, "  only %d of %d kills landed: the job finished before the others\n", r.Killed.Kills, r.Requested)
	}
	for _, d := range r.Sinks {
		fmt.Fprintf(&b, "  sinks.%s: %d lines clean, %d lines killed", d.Sink, d.CleanLines, d.KilledLines)
		if d.Equal() {
			b.WriteString(": same lines\n")
			continue
		}
		fmt.Fprintf(&b, ": %d missing, %d extra\n", d.Missing, d.Extra)
		for _, l := range d.FirstMissing {
			fmt.Fprintf(&b, "    missing: %s\n", l)
		}
		for _, l := range d.FirstExtra {
			fmt.Fprintf(&b, "    extra:   %s\n", l)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "  sinks.%s: standard output, not compared\n", s)
	}
	for _, run := range []*RunResult{r.Clean, r.Killed} {
		if run.Failures > 0 {
			fmt.Fprintf(&b, "  warning: in the %s run the job failed by itself %d times and the program restarted it; first: %s\n", run.Name, run.Failures, run.FirstFailure)
		}
	}
	if !r.Identical() {
		fmt.Fprintf(&b, "  replay: pipegen verify -seed %d -kills %d ...\n", r.Seed, r.Requested)
	}
	if r.Dir != "" {
		fmt.Fprintf(&b, "  work directory: %s\n", r.Dir)
	}
	return b.String()
}

func logger(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		if w != nil {
			fmt.Fprintf(w, "verify: "+format+"\n", args...)
		}
	}
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
