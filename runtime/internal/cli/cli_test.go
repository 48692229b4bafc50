package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/config/configtest"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/job"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/stream"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// The node indexes of demoConfig.
const (
	demoLines  = 0
	demoWords  = 1
	demoCounts = 2
	demoOut    = 3
	demoGen    = 4
	demoShow   = 5
)

// perGen is the number of records each generator subtask of the demo
// program sends.
const perGen = 10

// cliConfig is demoConfig without checkpoints: these tests are about the
// command line, not about the checkpoint protocol.
func cliConfig() *config.Config {
	c := configtest.Demo()
	c.Checkpoint.Mode = config.NoCheckpoints
	return c
}

// demoProgram is a program with cliConfig's settings whose Build wires
// gen -> counts with an Out and Inboxes; counts adds what it gets to a
// counter instead of writing to a sink.
type demoProgram struct {
	// fail makes subtask 1 of counts "abort" or "panic"; "build" makes
	// Build itself panic.
	fail string

	built   bool
	seen    *config.Config // the settings Build saw
	counted atomic.Int64
}

func (d *demoProgram) program() Program {
	return Program{Config: cliConfig(), Build: d.build}
}

func (d *demoProgram) build(j *job.Job) {
	d.built = true
	d.seen = j.Config.Clone()
	if d.fail == "build" {
		panic("wiring went wrong")
	}
	countsIn := stream.NewInboxes[int](j, j.Parallelism(demoCounts), j.Parallelism(demoGen))
	for i := range j.Parallelism(demoGen) {
		out := stream.NewOut(j, countsIn, i)
		ctl := j.Checkpointer().NewSourceCtl()
		j.Go("gen", i, func() {
			for k := 0; k < perGen || d.fail == "endless"; k++ {
				out.Hash(keygroup.HashUint64(uint64(k)), k)
				ctl.Count(1)
				if d.fail == "endless" {
					// It injects no barrier: no checkpoint ever completes.
					out.Flush()
					time.Sleep(time.Millisecond)
				}
			}
			out.End()
		})
	}
	for i := range j.Parallelism(demoCounts) {
		in := countsIn[i]
		j.Go("counts", i, func() {
			if i == 1 {
				switch d.fail {
				case "abort":
					fault.Abortf("bad record %d", 7)
				case "panic":
					panic("boom value")
				case "fatal":
					fault.Abort(&fault.Fatal{Err: errors.New("bad record 7 (a restart would read it again)")})
				}
			}
			for {
				m := in.Next()
				switch m.Kind {
				case stream.Records:
					d.counted.Add(int64(len(m.Recs)))
					in.Recycle(m.Recs)
				case stream.Barrier:
					in.Release(m.Checkpoint)
				case stream.End:
					return
				}
			}
		})
	}
}

// runDemo runs the demo program with args, in an empty working directory:
// whatever the run writes stays out of the source tree.
func runDemo(t *testing.T, d *demoProgram, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runDemoSignalled(t, d, nil, args...)
}

// runDemoSignalled is runDemo with the signals that stop the job.
func runDemoSignalled(t *testing.T, d *demoProgram, signals <-chan os.Signal, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	p := d.program()
	code = run(p, args, &out, &errOut, signals)
	if !reflect.DeepEqual(p.Config, cliConfig()) {
		t.Errorf("run %q changed the compiled settings: %+v", args, p.Config)
	}
	return code, out.String(), errOut.String()
}

func TestRunOK(t *testing.T) {
	d := new(demoProgram)
	code, stdout, stderr := runDemo(t, d, "run")
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if got := d.counted.Load(); got != perGen {
		t.Errorf("counts got %d records, want %d", got, perGen)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if !regexp.MustCompile(`^demo: done in \S+: 10 records read\n$`).MatchString(stderr) {
		t.Errorf("stderr %q, want the done line with 10 records read", stderr)
	}
}

func TestRunQuiet(t *testing.T) {
	d := new(demoProgram)
	code, stdout, stderr := runDemo(t, d, "run", "--quiet")
	if code != exitOK || stdout != "" || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and no output", code, stdout, stderr)
	}
	if got := d.counted.Load(); got != perGen {
		t.Errorf("counts got %d records, want %d", got, perGen)
	}
}

func TestRunTaskFails(t *testing.T) {
	cases := []struct {
		fail string
		want string // the start of the error line
	}{
		{"abort", "demo: counts[1]: bad record 7\n"},
		{"panic", "demo: counts[1]: panic: boom value\n"},
		{"build", "demo: build[0]: panic: wiring went wrong\n"},
	}
	for _, tc := range cases {
		t.Run(tc.fail, func(t *testing.T) {
			d := &demoProgram{fail: tc.fail}
			code, stdout, stderr := runDemo(t, d, "run")
			if code != exitFail {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
			}
			if !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("stderr %q, want it to start with %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "done in") {
				t.Errorf("a failed run printed the done line:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

// TestRunEvents checks the machine-readable events of a run that ends and
// of one that fails.
func TestRunEvents(t *testing.T) {
	cases := []struct {
		fail  string
		kinds []events.Kind
		err   string // the error of the last event
	}{
		{"", []events.Kind{events.Start, events.Done}, ""},
		{"panic", []events.Kind{events.Start, events.Fail}, "counts[1]: panic: boom value"},
	}
	for _, tc := range cases {
		t.Run(tc.fail, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			runDemo(t, &demoProgram{fail: tc.fail}, "run", "--quiet", "--events", path)
			got, err := events.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []events.Kind
			for _, e := range got {
				kinds = append(kinds, e.Kind)
			}
			if !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("events %v, want %v", kinds, tc.kinds)
			}
			last := got[len(got)-1]
			if last.Error != tc.err {
				t.Errorf("last event's error %q, want %q", last.Error, tc.err)
			}
			if tc.fail == "" && last.Records != perGen { // gen has one subtask
				t.Errorf("done event counts %d records, want %d", last.Records, perGen)
			}
		})
	}
}

func TestRunUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want []string // in stderr
	}{
		{nil, []string{"usage: demo run [flags]", "demo run --help"}},
		{[]string{"start"}, []string{`demo: unknown command "start"`, "the commands are run, checkpoints, savepoint and stop"}},
		{[]string{"--parallelism", "2"}, []string{`unknown command "--parallelism"`}},
		{[]string{"run", "--bogus"}, []string{"demo run: flag provided but not defined: -bogus", "demo run --help"}},
		{[]string{"run", "--parallelism", "many"}, []string{`--parallelism: parallelism wants a whole number from 1 to 32768, got "many"`}},
		{[]string{"run", "--parallelism", "0"}, []string{`--parallelism: parallelism wants a whole number from 1 to 32768, got "0"`}},
		{[]string{"run", "--parallelism=-3"}, []string{`--parallelism: parallelism wants a whole number from 1 to 32768, got "-3"`}},
		{[]string{"run", "--checkpoint-dir", ""}, []string{"--checkpoint-dir: checkpoint.dir must not be empty"}},
		{[]string{"run", "--set"}, []string{"flag needs an argument: -set"}},
		{[]string{"run", "--set", "nope=1"}, []string{`demo run: --set nope=1: unknown setting "nope"`}},
		{[]string{"run", "--set", "sources.lines.path"}, []string{`--set "sources.lines.path": write KEY=VALUE`}},
		{[]string{"run", "--set", "parallelism=0", "--set", "sources.nope.path=x"}, []string{
			"--set parallelism=0: parallelism wants a whole number from 1 to 32768, got \"0\"",
			`--set sources.nope.path=x: no source named "nope"`, // every bad override is reported
		}},
		{[]string{"run", "--set", "operators.words.parallelism=3"}, []string{"set sources.lines.parallelism instead"}},
		{[]string{"run", "--set", "sources.lines.format=csv"}, []string{"format is fixed when the pipeline is compiled"}},
		{[]string{"run", "stray"}, []string{`demo run: unexpected argument "stray"`, "--set KEY=VALUE"}},
		{[]string{"run", "--quiet", "stray", "--set", "x=1"}, []string{`unexpected argument "stray"`}},
		{[]string{"run", "--set", "max-parallelism=2", "--parallelism", "4"}, []string{`operator "counts" has parallelism 4 but max-parallelism is 2`}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			d := new(demoProgram)
			code, stdout, stderr := runDemo(t, d, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want 2", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if d.built {
				t.Error("the job was built despite the usage error")
			}
		})
	}
}

func TestRunAppliesSettings(t *testing.T) {
	d := new(demoProgram)
	dir := filepath.Join(t.TempDir(), "ck")
	code, _, stderr := runDemo(t, d, "run",
		"--parallelism", "3",
		"--checkpoint-dir", dir,
		"--set", "operators.counts.parallelism=4",
		"--set", "sources.lines.path=big.txt",
		"--set", "checkpoint.retain=7",
		"--quiet")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	c := d.seen
	if c.Parallelism != 3 {
		t.Errorf("parallelism %d, want 3", c.Parallelism)
	}
	par := map[string]int{}
	for _, n := range c.Nodes {
		par[n.Name] = n.Parallelism
	}
	want := map[string]int{"lines": 3, "words": 3, "counts": 4, "out": 4, "gen": 1, "show": 3}
	if !reflect.DeepEqual(par, want) {
		t.Errorf("node parallelism %v, want %v", par, want)
	}
	if c.Checkpoint.Dir != dir {
		t.Errorf("checkpoint dir %q, want %s", c.Checkpoint.Dir, dir)
	}
	if c.Checkpoint.Retain != 7 {
		t.Errorf("checkpoint retain %d, want 7", c.Checkpoint.Retain)
	}
	if got := c.Nodes[demoLines].Option("path"); got != "big.txt" {
		t.Errorf("lines path %q, want big.txt", got)
	}
	if got := c.Nodes[demoLines].Option("on-error"); got != "fail" {
		t.Errorf("lines on-error %q, want the resolved default fail", got)
	}
	if got := d.counted.Load(); got != perGen {
		t.Errorf("counts got %d records, want %d", got, perGen)
	}
}

func TestRunCompiledSettings(t *testing.T) {
	d := new(demoProgram)
	if code, _, stderr := runDemo(t, d, "run", "--quiet"); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	c := d.seen
	par := map[string]int{}
	for _, n := range c.Nodes {
		par[n.Name] = n.Parallelism
	}
	want := map[string]int{"lines": 2, "words": 2, "counts": 2, "out": 2, "gen": 1, "show": 2}
	if !reflect.DeepEqual(par, want) {
		t.Errorf("node parallelism %v, want %v", par, want)
	}
	if c.Checkpoint.Dir != "checkpoints" || c.Checkpoint.Mode != config.NoCheckpoints || c.Checkpoint.Retain != 3 {
		t.Errorf("checkpoint %+v, want the compiled one", c.Checkpoint)
	}
}

var settingLine = regexp.MustCompile(`^  (\S+) +(.*) \[(.*)\]$`)

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"run", "--help"}, {"run", "-h"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			d := new(demoProgram)
			code, stdout, stderr := runDemo(t, d, args...)
			if code != exitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing on stderr", code, stderr)
			}
			if d.built {
				t.Error("--help built the job")
			}
			checkHelp(t, stdout)
		})
	}
}

func checkHelp(t *testing.T, help string) {
	for _, w := range []string{
		"demo: a stream processing job generated by pipegen from demo/pipeline.yaml",
		"demo run [flags]",
		"--parallelism N", "(default 2)",
		"--checkpoint-dir DIR", `(default "checkpoints")`,
		"--set KEY=VALUE",
		"--quiet",
	} {
		if !strings.Contains(help, w) {
			t.Errorf("help does not contain %q:\n%s", w, help)
		}
	}
	_, settings, ok := strings.Cut(help, "Settings for --set (compiled value in brackets):\n")
	if !ok {
		t.Fatalf("help has no settings section:\n%s", help)
	}
	var keys []string
	values := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(settings, "\n"), "\n") {
		m := settingLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("setting line %q is not `  KEY  DOC [VALUE]`", line)
			continue
		}
		if strings.TrimSpace(m[2]) == "" {
			t.Errorf("setting %s has no description", m[1])
		}
		keys = append(keys, m[1])
		values[m[1]] = m[3]
	}
	want := []string{
		"parallelism", "max-parallelism",
		"checkpoint.mode", "checkpoint.interval", "checkpoint.timeout", "checkpoint.min-pause", "checkpoint.retain", "checkpoint.dir",
		"restart.strategy", "restart.attempts", "restart.delay", "restart.max-delay", "restart.multiplier", "restart.max-failures", "restart.interval",
		"sources.lines.parallelism", "sources.lines.path", "sources.lines.on-error", "sources.lines.header", "sources.lines.delimiter", "sources.lines.strict",
		"operators.counts.parallelism",
		"sinks.out.path", "sinks.out.header", "sinks.out.delimiter",
		"sources.gen.parallelism", "sources.gen.rate",
		"sinks.show.parallelism", "sinks.show.delimiter",
	}
	if !slices.Equal(keys, want) {
		t.Errorf("help lists the settings\n%s\nwant\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	wantValues := map[string]string{
		"parallelism": "2", "max-parallelism": "8",
		"checkpoint.mode": "none", "checkpoint.interval": "10s", "checkpoint.timeout": "10m0s",
		"checkpoint.min-pause": "0s", "checkpoint.retain": "3", "checkpoint.dir": "checkpoints",
		"restart.strategy": "fixed-delay", "restart.attempts": "3", "restart.delay": "1s", "restart.multiplier": "2",
		"sources.lines.parallelism": "default", "sources.lines.path": "input.txt", "sources.lines.on-error": "fail",
		"sources.lines.header": "true", "sources.lines.delimiter": ",",
		"sources.gen.parallelism": "1", "sources.gen.rate": "0", "sinks.out.path": "out",
	}
	for k, v := range wantValues {
		if values[k] != v {
			t.Errorf("help shows %s [%s], want [%s]", k, values[k], v)
		}
	}
	// Every listed setting is one that --set takes, with the value shown.
	for _, k := range keys {
		v := values[k]
		if v == "default" {
			v = "3"
		}
		c := cliConfig()
		if err := c.Set(k + "=" + v); err != nil {
			t.Errorf("help lists %s [%s], but --set refuses it: %v", k, values[k], err)
		}
	}
}

func TestUsageListsEveryNode(t *testing.T) {
	// A config with many nodes: each gets its lines, in order.
	c := cliConfig()
	for i := range 3 {
		c.Nodes = append(c.Nodes, config.NodeConfig{Name: fmt.Sprintf("extra%d", i), Kind: "map", Section: "operators", Parallelism: i + 1})
	}
	var b bytes.Buffer
	usage(&b, c)
	for i := range 3 {
		line := fmt.Sprintf("operators.extra%d.parallelism", i)
		if !strings.Contains(b.String(), line) || !strings.Contains(b.String(), fmt.Sprintf("subtasks of extra%d [%d]", i, i+1)) {
			t.Errorf("usage lacks %s [%d]:\n%s", line, i+1, b.String())
		}
	}
}

// TestRunRefusesSecondInstance holds the lock of the checkpoint directory
// as a running instance of the job would: run fails at once, exit 1,
// naming the holder's pid.
func TestRunRefusesSecondInstance(t *testing.T) {
	ckpt := t.TempDir()
	lock, err := vfs.Default.Lock(filepath.Join(ckpt, "LOCK"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	d := new(demoProgram)
	code, _, stderr := runDemo(t, d, "run", "--set", "checkpoint.mode=exactly-once", "--checkpoint-dir", ckpt)
	want := fmt.Sprintf("checkpoint directory %s is in use by another instance of this job (pid %d)", ckpt, os.Getpid())
	if code != exitFail || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, want)
	}
	if d.counted.Load() != 0 {
		t.Error("the second instance processed records")
	}
}

// TestRunStopBounded stops a job whose checkpoints never complete: a second
// signal, or else the stop timeout, stops it at once, with exit status 1
// and a message that says so.
func TestRunStopBounded(t *testing.T) {
	cases := []struct {
		name    string
		signals int
		want    string
	}{
		{"timeout", 1, "no checkpoint completed within 100ms of interrupt (--stop-timeout): stopped at once"},
		{"second signal", 2, "stopped at once by a second interrupt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			signals := make(chan os.Signal, 2)
			go func() {
				time.Sleep(50 * time.Millisecond)
				for range tc.signals {
					signals <- os.Interrupt
				}
			}()
			start := time.Now()
			code, _, stderr := runDemoSignalled(t, &demoProgram{fail: "endless"}, signals, "run", "--quiet",
				"--set", "checkpoint.mode=exactly-once", "--checkpoint-dir", t.TempDir(), "--stop-timeout", "100ms")
			if code != exitFail || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, tc.want)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the stop took %s", took)
			}
		})
	}
}

// TestRunStopWithoutCheckpoints: a job without checkpoints stops at once on
// a signal, exit 1, and says that the next run starts over.
func TestRunStopWithoutCheckpoints(t *testing.T) {
	signals := make(chan os.Signal, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		signals <- os.Interrupt
	}()
	code, _, stderr := runDemoSignalled(t, &demoProgram{fail: "endless"}, signals, "run", "--quiet")
	if code != exitFail || !strings.Contains(stderr, "checkpoint.mode is none, so a new run starts from the beginning") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// TestRunFatalNoRestart: a failure that a restart cannot mend (a malformed
// record, say) ends the program at once, even with checkpoints and a
// restart strategy that would restart.
func TestRunFatalNoRestart(t *testing.T) {
	code, _, stderr := runDemo(t, &demoProgram{fail: "fatal"}, "run", "--quiet", "--set", "checkpoint.mode=exactly-once", "--checkpoint-dir", t.TempDir())
	if code != exitFail || !strings.Contains(stderr, "counts[1]: bad record 7") || strings.Contains(stderr, "restarting") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 at once, without a restart", code, stderr)
	}
}

// TestFailure checks what the status page lists of a failure: where it
// happened and, for a panic, the record and where it came from.
func TestFailure(t *testing.T) {
	pe := &fault.PanicError{Node: "counts", Subtask: 1, Value: "boom", Record: "{Text:x}", Origin: "in.txt:3", Stack: []byte("stack")}
	f := failure(pe, true)
	if f.Node != "counts" || f.Subtask != 1 || f.Record != "{Text:x}" || f.Origin != "in.txt:3" || !f.Restarted || f.Error != "counts[1]: panic: boom" {
		t.Errorf("failure of a panic: %+v", f)
	}
	f = failure(fault.FromPanic("lines", 0, abortWith(errors.New("disk full"))), false)
	if f.Node != "lines" || f.Subtask != 0 || f.Error != "lines[0]: disk full" || f.Record != "" {
		t.Errorf("failure of an abort: %+v", f)
	}
	if f := failure(errors.New("no node"), false); f.Node != "" {
		t.Errorf("failure without a subtask: %+v", f)
	}
}

// abortWith returns what a goroutine recovers from fault.Abort(err).
func abortWith(err error) (r any) {
	defer func() { r = recover() }()
	fault.Abort(err)
	return nil
}

func TestRunMemProfile(t *testing.T) {
	d := new(demoProgram)
	dir := t.TempDir()
	prof := filepath.Join(dir, "mem.pprof")
	code, _, stderr := runDemo(t, d, "run", "--quiet", "--memprofile", prof)
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	// pprof's profiles are gzipped protocol buffers.
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("--memprofile wrote %d bytes that are not gzip: % x", len(b), b[:min(len(b), 8)])
	}
	code, _, stderr = runDemo(t, d, "run", "--quiet", "--memprofile", filepath.Join(dir, "no", "such", "dir", "mem.pprof"))
	if code != exitUsage || !strings.Contains(stderr, "demo run: --memprofile: ") {
		t.Errorf("exit %d, stderr %q; want 2 and a --memprofile error", code, stderr)
	}
}
