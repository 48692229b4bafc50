package verify_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/verify"
)

// fakeVar makes the test binary play a generated program (see fakeJob).
const fakeVar = "PIPEGEN_VERIFY_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeVar); mode != "" {
		os.Exit(fakeJob(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeLines is the number of lines the fake job writes.
const fakeLines = 40

// fakeJob is a stand-in for a generated program, for the verifier's
// tests: `run --checkpoint-dir DIR --set sinks.out.path=OUT ...` writes
// fakeLines lines "line N", one committed file each, about 5 ms apart; its
// checkpoint is the number of the next line, in DIR/next. It resumes from
// it like a real program. Modes: ok; dup (a resumed run writes its first
// line twice); fail (exits 1); hang (never ends); flaky (reports a failure
// and an in-process restart once); busy (spins on the CPU between lines
// instead of sleeping).
func fakeJob(mode string, args []string) int {
	var ckpt, out, eventsFile string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--checkpoint-dir":
			i++
			ckpt = args[i]
		case args[i] == "--events":
			i++
			eventsFile = args[i]
		case args[i] == "--set" && strings.HasPrefix(args[i+1], "sinks.out.path="):
			i++
			out = strings.TrimPrefix(args[i], "sinks.out.path=")
		}
	}
	if args[0] != "run" || ckpt == "" || out == "" || eventsFile == "" {
		fmt.Fprintf(os.Stderr, "fake: bad command line %q\n", args)
		return 2
	}
	ev, c, err := events.Create(eventsFile, "fake")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	ev.Emit(events.Event{Kind: events.Start})
	switch mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "fake: boom")
		return 1
	case "hang":
		time.Sleep(time.Hour)
	case "flaky":
		// The log's wording is not the verifier's business: only the
		// events are.
		fmt.Fprintln(os.Stderr, "fake: something went wrong, trying again")
		ev.Emit(events.Event{Kind: events.Restart, Error: "sinks.out: disk on fire", Delay: time.Millisecond, Attempt: 1})
	}
	for _, d := range []string{ckpt, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	write := func(path, data string) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
			panic(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			panic(err)
		}
	}
	next := 0
	if b, err := os.ReadFile(filepath.Join(ckpt, "next")); err == nil {
		next, _ = strconv.Atoi(string(b))
		ev.Emit(events.Event{Kind: events.Resume, Checkpoint: int64(next), Path: ckpt})
		if mode == "dup" && next > 0 {
			write(filepath.Join(out, "part-dup"), fmt.Sprintf("line %d\n", next-1))
		}
	}
	// Uncommitted output is hidden.
	write(filepath.Join(out, ".part-x.inprogress"), "not committed\n")
	for ; next < fakeLines; next++ {
		write(filepath.Join(out, fmt.Sprintf("part-%d", next)), fmt.Sprintf("line %d\n", next))
		write(filepath.Join(ckpt, "next"), strconv.Itoa(next+1))
		ev.Emit(events.Event{Kind: events.Checkpoint, Checkpoint: int64(next + 1)})
		if mode == "busy" {
			for t := cpuTime(); cpuTime()-t < 5*time.Millisecond; {
			}
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	fmt.Println("fake: printed")
	return 0
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fakeVerifier returns a verifier that runs the fake job in mode.
func fakeVerifier(t *testing.T, mode string) *verify.Verifier {
	t.Setenv(fakeVar, mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &verify.Verifier{Binary: exe, Pipeline: "fake", Mode: "exactly-once", Dir: t.TempDir(), Sinks: []string{"out"}, Timeout: time.Minute}
}

func fakeWant() []string {
	var want []string
	for i := range fakeLines {
		want = append(want, fmt.Sprintf("line %d", i))
	}
	slices.Sort(want)
	return want
}

func TestRunClean(t *testing.T) {
	v := fakeVerifier(t, "ok")
	r, err := v.Run("clean")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kills != 0 || r.Restarts != 0 || r.Resumed != 0 || r.Failures != 0 {
		t.Errorf("clean run: %d kills, %d restarts, %d resumed, %d failures; want none", r.Kills, r.Restarts, r.Resumed, r.Failures)
	}
	if !slices.Equal(r.Output["out"], fakeWant()) {
		t.Errorf("output %q, want %q", r.Output["out"], fakeWant())
	}
	if r.Duration < fakeLines*2*time.Millisecond {
		t.Errorf("duration %s: shorter than the job", r.Duration)
	}
	if r.Dir != filepath.Join(v.Dir, "clean") {
		t.Errorf("run directory %s", r.Dir)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Dir, "stdout.txt")); string(b) != "fake: printed\n" {
		t.Errorf("stdout.txt holds %q", b)
	}
	// The run starts over: an earlier run's checkpoints are removed.
	r, err = v.Run("clean")
	if err != nil {
		t.Fatal(err)
	}
	if r.Resumed != 0 {
		t.Errorf("a second run in the same directory resumed from the first's checkpoint")
	}
}

func TestRunWithKills(t *testing.T) {
	v := fakeVerifier(t, "ok")
	var log strings.Builder
	v.Log = &log
	// Long enough for a process to start and commit a few lines on a
	// busy machine, short of the 200 ms the fake job takes.
	delays := []time.Duration{0, 90 * time.Millisecond, 70 * time.Millisecond}
	r, err := v.RunWithKills("killed", delays, "--set", "checkpoint.interval=20ms")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kills != 3 || r.Restarts != 3 {
		t.Errorf("%d kills and %d restarts, want 3 and 3", r.Kills, r.Restarts)
	}
	if r.Resumed < 2 {
		t.Errorf("%d processes resumed, want at least 2", r.Resumed)
	}
	if !slices.Equal(r.Output["out"], fakeWant()) {
		t.Errorf("output %q, want %q", r.Output["out"], fakeWant())
	}
	for _, want := range []string{"verify: killed run: kill 1/3: process 1 killed 0s after its start\n", "verify: killed run: restart 3\n"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	stderr, _ := os.ReadFile(filepath.Join(r.Dir, "stderr.txt"))
	if n := strings.Count(string(stderr), "=== process "); n != 4 {
		t.Errorf("stderr.txt has %d process headers, want 4:\n%s", n, stderr)
	}
	if !strings.Contains(string(stderr), "--set checkpoint.interval=20ms") {
		t.Errorf("the extra arguments are not on the command line:\n%s", stderr)
	}
}

func TestRunEndsBeforeKill(t *testing.T) {
	v := fakeVerifier(t, "ok")
	r, err := v.RunWithKills("killed", []time.Duration{time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kills != 0 || r.Restarts != 0 || len(r.Output["out"]) != fakeLines {
		t.Errorf("%d kills, %d restarts, %d lines; want 0, 0, %d", r.Kills, r.Restarts, len(r.Output["out"]), fakeLines)
	}
}

func TestRunFailures(t *testing.T) {
	v := fakeVerifier(t, "fail")
	_, err := v.Run("clean")
	if err == nil || !strings.Contains(err.Error(), "clean run, process 1: ended with exit status 1") || !strings.Contains(err.Error(), "\tfake: boom") {
		t.Errorf("a failing job: %v", err)
	}

	v = fakeVerifier(t, "hang")
	v.Timeout = 50 * time.Millisecond
	start := time.Now()
	_, err = v.Run("clean")
	if err == nil || !strings.Contains(err.Error(), "did not finish within 50ms") {
		t.Errorf("a job that never ends: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("the timeout took %s", time.Since(start))
	}

	v = fakeVerifier(t, "flaky")
	r, err := v.Run("clean")
	if err != nil {
		t.Fatal(err)
	}
	if r.Failures != 1 || r.FirstFailure != "sinks.out: disk on fire" {
		t.Errorf("%d failures, first %q", r.Failures, r.FirstFailure)
	}
}

func TestVerifierVerify(t *testing.T) {
	v := fakeVerifier(t, "ok")
	v.Skipped = []string{"print"}
	var log strings.Builder
	v.Log = &log
	rep, err := v.Verify(verify.Options{Kills: 2, Seed: 7, Parallelism: 3, Sets: []string{"sources.x.rate=5"}})
	if err != nil {
		t.Fatal(err)
	}
	interval := verify.CheckpointInterval(rep.Clean.Duration, 2)
	if !rep.Identical() || rep.Seed != 7 || rep.Requested != 2 || rep.Interval != interval {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Sinks) != 1 || rep.Sinks[0].CleanLines != fakeLines || rep.Sinks[0].KilledLines != fakeLines {
		t.Errorf("sinks %+v", rep.Sinks)
	}
	for _, want := range []string{
		"verify: warning: sinks.print writes to standard output, which is not transactional: it is skipped in the comparison\n",
		"verify: seed 7 (replay with -seed 7)\n",
		"verify: killed run: checkpoint interval " + interval.String() + "\n",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	stderr, _ := os.ReadFile(filepath.Join(v.Dir, "killed", "stderr.txt"))
	// The user's settings come after the interval, so that they win.
	if !strings.Contains(string(stderr), "--parallelism 3 --set checkpoint.interval="+interval.String()+" --set sources.x.rate=5") {
		t.Errorf("killed run's command line:\n%s", stderr)
	}
	s := rep.String()
	if !strings.HasPrefix(s, "fake: committed output after ") || !strings.Contains(s, "is identical to the clean run's (seed 7)") ||
		!strings.Contains(s, "sinks.out: 40 lines clean, 40 lines killed: same lines") || !strings.Contains(s, "sinks.print: standard output, not compared") {
		t.Errorf("report:\n%s", s)
	}
}

func TestVerifierFindsDuplicates(t *testing.T) {
	v := fakeVerifier(t, "dup")
	rep, err := v.Verify(verify.Options{Kills: 3, Seed: 1, KeepInterval: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Killed.Resumed == 0 {
		t.Skip("no process resumed: the kills came too early on this machine")
	}
	if rep.Identical() {
		t.Fatalf("a job that duplicates after a restart passes:\n%s", rep)
	}
	d := rep.Sinks[0]
	if d.Missing != 0 || d.Extra == 0 || d.KilledLines != fakeLines+d.Extra {
		t.Errorf("diff %+v", d)
	}
	s := rep.String()
	for _, want := range []string{"DIFFERS from the clean run's (seed 1)", fmt.Sprintf("0 missing, %d extra", d.Extra), "    extra:   line ", "replay: pipegen verify -seed 1 -kills 3"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if rep.Interval != 0 {
		t.Errorf("interval %s with KeepInterval", rep.Interval)
	}
}

func TestKillDelays(t *testing.T) {
	span := 2 * time.Second
	a := verify.KillDelays(rand.New(rand.NewPCG(3, 4)), 10, span)
	b := verify.KillDelays(rand.New(rand.NewPCG(3, 4)), 10, span)
	if !slices.Equal(a, b) {
		t.Errorf("the same seed drew %v and %v", a, b)
	}
	if len(a) != 10 {
		t.Fatalf("%d delays, want 10", len(a))
	}
	var sum time.Duration
	for _, d := range a {
		if d < 0 {
			t.Errorf("negative delay in %v", a)
		}
		sum += d
	}
	if sum >= span {
		t.Errorf("the delays add up to %s, beyond the span %s", sum, span)
	}
	// Spread: the kill moments are not all in one half of the run.
	if sum < span/2 {
		t.Logf("the last moment is at %s of %s (possible, but rare)", sum, span)
	}
	if d := verify.KillDelays(rand.New(rand.NewPCG(1, 1)), 3, 0); len(d) != 3 {
		t.Errorf("a zero span: %v", d)
	}
}

func TestCheckpointInterval(t *testing.T) {
	for _, tc := range []struct {
		clean time.Duration
		kills int
		want  time.Duration
	}{
		{0, 5, 20 * time.Millisecond},
		{100 * time.Millisecond, 5, 20 * time.Millisecond},
		{2 * time.Second, 5, 111 * time.Millisecond},
		{2 * time.Second, 1, 333 * time.Millisecond},
		{2 * time.Second, 0, 333 * time.Millisecond},
		{2345 * time.Millisecond, 6, 112 * time.Millisecond},
		{time.Minute, 5, time.Second},
	} {
		if got := verify.CheckpointInterval(tc.clean, tc.kills); got != tc.want {
			t.Errorf("CheckpointInterval(%s, %d) = %s, want %s", tc.clean, tc.kills, got, tc.want)
		}
	}
	if got := verify.KilledTimeout(time.Second); got != 50*time.Second {
		t.Errorf("KilledTimeout(1s) = %s", got)
	}
}

func TestCompareLines(t *testing.T) {
	d := verify.CompareLines([]string{"a", "b", "b", "c", "e"}, []string{"a", "b", "c", "c", "d", "e", "f"}, 1)
	if d.Equal() || d.Missing != 1 || d.Extra != 3 || !slices.Equal(d.FirstMissing, []string{"b"}) || !slices.Equal(d.FirstExtra, []string{"c"}) {
		t.Errorf("diff %+v", d)
	}
	if d := verify.CompareLines([]string{"x", "x"}, []string{"x", "x"}, 5); !d.Equal() {
		t.Errorf("equal multisets: %+v", d)
	}
	if d := verify.CompareLines(nil, []string{"x"}, 5); d.Extra != 1 || d.Missing != 0 {
		t.Errorf("against nothing: %+v", d)
	}
}

func TestReadCommitted(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"part-1-0":                 "b\na\n",
		"part-0-0":                 "c\nno newline",
		".part-0-1.inprogress":     "hidden\n",
		".part-0-2.pending":        "hidden\n",
		"sub/part-9-9":             "in a directory\n",
		"part-0-3":                 "",
		"part-2-0":                 "a\n",
		".verify-something-else":   "hidden\n",
		"sub/.part-0-0.inprogress": "x\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := verify.ReadCommitted(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "a", "b", "c", "no newline"}; !slices.Equal(got, want) {
		t.Errorf("ReadCommitted = %q, want %q", got, want)
	}
	if got, err := verify.ReadCommitted(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Errorf("a missing directory: %q, %v", got, err)
	}
}

func TestNewVerifierWithoutFileSink(t *testing.T) {
	res := &compile.Result{IR: &ir.Pipeline{Name: "printer", Nodes: []*ir.Node{
		{Name: "gen", Kind: ir.Source, Connector: "generator"},
		{Name: "print", Kind: ir.Sink, Connector: "stdout"},
	}}}
	dir := filepath.Join(t.TempDir(), "work")
	_, err := verify.NewVerifier(res, dir)
	if err == nil || !strings.Contains(err.Error(), "pipeline printer has no file sink") {
		t.Errorf("NewVerifier: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("NewVerifier made its directory before failing (%v)", err)
	}
}

// TestVerifyCompileError: Verify says what it builds and where before it
// compiles (the progress of a long load follows that line), and when the
// pipeline does not compile, returns the error and removes the temporary
// directory it made.
func TestVerifyCompileError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(path, []byte("version: 2\nname: broken\nwhatever: [\n  1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	_, err := verify.Verify(path, verify.Options{Log: &log})
	if err == nil {
		t.Fatal("Verify of a pipeline that does not compile returned no error")
	}
	m := regexp.MustCompile(`^verify: building (.+) into (.+)\n$`).FindStringSubmatch(log.String())
	if m == nil || m[1] != path {
		t.Fatalf("log %q, want one line: verify: building %s into DIR", log.String(), path)
	}
	if _, err := os.Stat(m[2]); !os.IsNotExist(err) {
		t.Errorf("the temporary directory %s is left after the compile failed (%v)", m[2], err)
	}
}

// TestCPUKills checks that with CPUKills a process is killed when it has
// used its delay in CPU time: a job that spins is killed after that much
// CPU, and one that sleeps, using next to no CPU, is not killed at all
// within the same delay.
func TestCPUKills(t *testing.T) {
	if !verify.CPUClock() {
		t.Skip("this system cannot read another process's CPU time")
	}
	var log strings.Builder
	v := fakeVerifier(t, "busy")
	v.CPUKills, v.Log = true, &log
	delays := []time.Duration{40 * time.Millisecond, 40 * time.Millisecond}
	r, err := v.RunWithKills("killed", delays)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kills != 2 || r.Resumed != 2 {
		t.Errorf("%d kills and %d resumed, want 2 and 2", r.Kills, r.Resumed)
	}
	if !slices.Equal(r.Output["out"], fakeWant()) {
		t.Errorf("output %q, want %q", r.Output["out"], fakeWant())
	}
	// The busy job spins about fakeLines*5ms in all, plus what the two
	// killed processes spun before their kills.
	if r.CPU < fakeLines*5*time.Millisecond {
		t.Errorf("the run used %s of CPU time, less than its spinning", r.CPU)
	}
	kills := regexp.MustCompile(`kill (\d)/2: process \d killed after (\S+) of CPU time from its start event, \S+ after its start`).FindAllStringSubmatch(log.String(), -1)
	if len(kills) != 2 {
		t.Errorf("the log does not give both kills' CPU time:\n%s", log.String())
	}
	for _, m := range kills {
		k, _ := strconv.Atoi(m[1])
		if d, err := time.ParseDuration(m[2]); err != nil || d < delays[k-1] {
			t.Errorf("kill %d came after %s of CPU time, before its %s", k, m[2], delays[k-1])
		}
	}

	v = fakeVerifier(t, "ok")
	v.CPUKills = true
	r, err = v.RunWithKills("killed", []time.Duration{time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kills != 0 || r.Duration < fakeLines*5*time.Millisecond {
		t.Errorf("a sleeping job was killed %d times in %s: its CPU time is far from 1s", r.Kills, r.Duration)
	}
}
