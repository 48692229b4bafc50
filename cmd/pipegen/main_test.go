package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/dsl"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/settings"
)

var (
	good   = filepath.Join("testdata", "good", "pipeline.yaml")
	bad    = filepath.Join("testdata", "bad", "pipeline.yaml")
	broken = filepath.Join("testdata", "broken-go", "pipeline.yaml")
)

// TestMain keeps the loaded Go packages (dsl.CachePackages): the tests
// compile the same pipelines again and again (testdata/good's fifteen
// times), and each load runs go list. A test that rewrites a package's
// files (TestGenerateAnnotatedPackage's typo) gets it loaded again.
func TestMain(m *testing.M) {
	dsl.CachePackages()
	os.Exit(m.Run())
}

// pipegen runs the command line and returns its exit status and output.
func pipegen(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the first line of stderr
	}{
		{nil, "usage:"},
		{[]string{"frobnicate", good}, `pipegen: unknown command "frobnicate"`},
		{[]string{"check", "-pkg", "testdata", good}, "pipegen check: want a pipeline file or -pkg DIR, not both"},
		{[]string{"generate", "-pkg", "testdata", "-o", "x"}, "pipegen generate: -o is for a pipeline file"},
		{[]string{"generate", "-cmd", good}, "pipegen generate: -cmd is for the //pipegen: directives of a package"},
		{[]string{"generate", "-check", "-dump-ir"}, "pipegen generate: -dump-ir and -check do not go together"},
		{[]string{"build", "-cmd", good}, "pipegen build: flag provided but not defined: -cmd"},
		{[]string{"check", good, bad}, "pipegen check: want one pipeline file, got 2 arguments"},
		{[]string{"generate", good, "-o", "x"}, "pipegen generate: want one pipeline file, got 3 arguments"},
		{[]string{"generate", "-x", good}, "pipegen generate: flag provided but not defined: -x"},
		{[]string{"check", "-o", "x", good}, "pipegen check: flag provided but not defined: -o"},
		{[]string{"build", "-o"}, "pipegen build: flag needs an argument: -o"},
		{[]string{"generate", "-dump-ir=maybe", good}, `pipegen generate: invalid boolean value "maybe" for -dump-ir`},
		{[]string{"schema", good}, "pipegen schema: takes no arguments, got 1"},
	} {
		code, stdout, stderr := pipegen(t, tc.args...)
		if code != 2 {
			t.Errorf("pipegen %q: exit status %d, want 2\n%s", tc.args, code, stderr)
		}
		first, _, _ := strings.Cut(stderr, "\n")
		if !strings.HasPrefix(first, tc.want) {
			t.Errorf("pipegen %q: stderr starts with %q, want %q", tc.args, first, tc.want)
		}
		// The usage of the command, or of all of them.
		usage := ""
		if len(tc.args) > 0 {
			usage = "  pipegen " + tc.args[0] + " "
		}
		if strings.HasPrefix(first, "pipegen: ") || first == "usage:" {
			usage = "  pipegen generate [-o DIR] [-dump-ir] [-check] PIPELINE.yaml"
		}
		if !strings.Contains(stderr, "usage:\n") || !strings.Contains(stderr, usage) {
			t.Errorf("pipegen %q: stderr has no usage with %q:\n%s", tc.args, usage, stderr)
		}
		if stdout != "" {
			t.Errorf("pipegen %q: printed %q on stdout", tc.args, stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := pipegen(t, "help")
	if code != 0 || !strings.HasPrefix(stdout, "usage:") || stderr != "" {
		t.Errorf("pipegen help: exit status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestCheckGood(t *testing.T) {
	code, stdout, stderr := pipegen(t, "check", good)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr)
	}
	// The three nodes are fused: check lists them.
	if want := good + ": pipeline good is fine: 3 nodes\n  fused, one goroutine per subtask of \"numbers\": numbers, squares, out\n"; stdout != want || stderr != "" {
		t.Errorf("stdout %q, stderr %q; want %q and nothing", stdout, stderr, want)
	}
}

// badWant is what check says about testdata/bad, with paths relative to
// dir.
func badWant(dir string) string {
	return filepath.Join(dir, "pipeline.yaml") + `:7:5: unknown key "rte" in source "numbers", did you mean "rate"? (the generator source takes generate, rate)` + "\n" +
		filepath.Join(dir, "pipeline.yaml") + `:11:10: map Square has the wrong signature: expected func(int) Out or func(int) (Out, error) (or *int for int: the record by pointer), got func(n string) int (declared at ` + filepath.Join(dir, "bad.go") + ":7:6)\n"
}

func TestCheckBad(t *testing.T) {
	abs, err := filepath.Abs(bad)
	if err != nil {
		t.Fatal(err)
	}
	// Named relatively or absolutely, the file is shown relative to the
	// working directory.
	for _, path := range []string{bad, abs} {
		code, stdout, stderr := pipegen(t, "check", path)
		if code != 1 {
			t.Errorf("check %s: exit status %d, want 1", path, code)
		}
		if want := badWant(filepath.Join("testdata", "bad")); stderr != want {
			t.Errorf("check %s: stderr\n%s\nwant\n%s", path, stderr, want)
		}
		if stdout != "" {
			t.Errorf("check %s: stdout %q", path, stdout)
		}
	}
}

func TestCheckBadFromOtherDirectory(t *testing.T) {
	abs, err := filepath.Abs(bad)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("testdata")
	for _, path := range []string{filepath.Join("bad", "pipeline.yaml"), abs} {
		code, _, stderr := pipegen(t, "check", path)
		if code != 1 {
			t.Errorf("check %s: exit status %d, want 1", path, code)
		}
		if want := badWant("bad"); stderr != want {
			t.Errorf("check %s in testdata: stderr\n%s\nwant\n%s", path, stderr, want)
		}
	}
}

func TestCheckGoErrors(t *testing.T) {
	code, _, stderr := pipegen(t, "check", broken)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	goFile := filepath.Join("testdata", "broken-go", "broken.go") + ":5:44: "
	if len(lines) != 2 || !strings.HasPrefix(lines[0], goFile) || !strings.Contains(lines[0], "cannot use seq") ||
		!strings.HasPrefix(lines[1], broken+`:1:1: package "." has errors`) {
		t.Errorf("stderr:\n%s\nwant the Go error at %s... and the package's error", stderr, goFile)
	}
	if strings.Contains(stderr, "/work") || strings.Contains(stderr, "/tmp") {
		t.Errorf("an absolute path in:\n%s", stderr)
	}
}

func TestGenerate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := pipegen(t, "generate", "-o", out, good)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr)
	}
	if want := "wrote 2 files to " + out + "\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"main.go", "pipeline.go"}) {
		t.Errorf("generate wrote %v", names)
	}
}

// TestGenerateDefaultDirectory: generate writes cmd/NAME next to the
// pipeline, where go build ./cmd/NAME makes the binary NAME, and where
// pipegen build's binary NAME does not go.
func TestGenerateDefaultDirectory(t *testing.T) {
	dir := filepath.Join("testdata", "good", "cmd", "good")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(dir)) })
	code, stdout, stderr := pipegen(t, "generate", good)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr)
	}
	if want := "wrote 2 files to " + dir + "\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pipeline.go")); err != nil {
		t.Error(err)
	}
}

func TestGenerateErrorsWriteNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := pipegen(t, "generate", "-o", out, bad)
	if code != 1 || stderr != badWant(filepath.Join("testdata", "bad")) || stdout != "" {
		t.Errorf("exit status %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("generate created %s for a pipeline with errors (%v)", out, err)
	}
	// Nor the default directory, next to the pipeline.
	if code, _, _ := pipegen(t, "generate", bad); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if _, err := os.Stat(filepath.Join("testdata", "bad", "bad")); !os.IsNotExist(err) {
		t.Errorf("generate created testdata/bad/bad for a pipeline with errors (%v)", err)
	}
}

func TestGenerateDumpIR(t *testing.T) {
	code, stdout, stderr := pipegen(t, "generate", "-dump-ir", good)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr)
	}
	var p ir.Pipeline
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("-dump-ir printed no ir.Pipeline: %v\n%s", err, stdout)
	}
	if p.Name != "good" || len(p.Nodes) != 3 || p.Source != "cmd/pipegen/testdata/good/pipeline.yaml" {
		t.Errorf("decoded: name %q, %d nodes, source %q", p.Name, len(p.Nodes), p.Source)
	}
	if _, err := os.Stat(filepath.Join("testdata", "good", "good")); !os.IsNotExist(err) {
		t.Errorf("-dump-ir wrote the program too (%v)", err)
	}
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache to keep the generated source in: %v", err)
	}
	// Without -tags in GOFLAGS (make test sets the same ones), so that
	// pipegen build adds its own.
	var flags []string
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if !strings.HasPrefix(f, "-tags") && !strings.HasPrefix(f, "--tags") {
			flags = append(flags, f)
		}
	}
	t.Setenv("GOFLAGS", strings.Join(flags, " "))
	bin := filepath.Join(t.TempDir(), "prog")
	code, stdout, stderr := pipegen(t, "build", "-o", bin, good)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr)
	}
	// The line says where the generated source is kept, for the stacks
	// of the program that name it.
	src := regexp.MustCompile(`^built (.*) \(its generated source is in (.*)\)\n$`).FindStringSubmatch(stdout)
	if src == nil || src[1] != bin || !strings.HasPrefix(src[2], filepath.Join(cache, "pipegen", "good-")) {
		t.Errorf("stdout %q, want built %s and the generated source's directory in %s", stdout, bin, cache)
	} else if _, err := os.Stat(filepath.Join(src[2], "pipeline.go")); err != nil {
		t.Error(err)
	}
	if out, err := exec.Command(bin, "--help").CombinedOutput(); err != nil {
		t.Errorf("%s --help: %v\n%s", bin, err, out)
	}
	checkStatic(t, bin)
	if code, _, stderr := pipegen(t, "build", "-o", bin+"2", bad); code != 1 || !strings.Contains(stderr, "unknown key") {
		t.Errorf("build of a bad pipeline: exit status %d\n%s", code, stderr)
	}
	if _, err := os.Stat(bin + "2"); !os.IsNotExist(err) {
		t.Errorf("build of a bad pipeline wrote a binary (%v)", err)
	}
}

// TestBuildPGO: -pgo FILE has the go command build the program guided by
// the profile, and a profile that is not there stops the build before
// anything is generated. The go command only prints what it would run
// (-n): a build guided by a profile compiles every package again, the
// standard library's too, a minute of CPU; the builds of
// examples/nexmark's queries (docs/runtime.md) are the real ones.
func TestBuildPGO(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	var printed string
	orig := goBuild
	t.Cleanup(func() { goBuild = orig })
	goBuild = func(res *compile.Result, bin string, flags []string, _ func(compile.BuildStep)) error {
		out, err := res.BuildOutput(bin, append(flags, "-n")...)
		printed = out
		return err
	}
	dir := t.TempDir()
	profile := filepath.Join(dir, "cpu.pprof")
	writeCPUProfile(t, profile)
	bin := filepath.Join(dir, "prog")
	code, stdout, stderr := pipegen(t, "build", "-o", bin, "-pgo", profile, good)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr)
	}
	if want := "guided by the profile " + profile; !strings.Contains(stdout, want) {
		t.Errorf("stdout %q, want it to say %q", stdout, want)
	}
	// The build settings the binary would record (go version -m), and the
	// compiles that take the profile.
	for _, want := range []string{`build\t-pgo=` + profile, "-pgoprofile="} {
		if !strings.Contains(printed, want) {
			t.Errorf("the go command would not build with the profile: no %s in what it prints (%d bytes)", want, len(printed))
		}
	}
	code, _, stderr = pipegen(t, "build", "-o", bin+"2", "-pgo", filepath.Join(dir, "none.pprof"), good)
	if want := "pipegen build: the CPU profile for a profile-guided build: "; code != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "--cpuprofile") {
		t.Errorf("build with a missing profile: exit status %d, stderr %q; want 1 and %q... with how to make one", code, stderr, want)
	}
	printed = ""
	if code, _, stderr := pipegen(t, "build", "-o", bin, "-pgo", "off", good); code != 0 || strings.Contains(printed, "-pgo") {
		t.Errorf("build -pgo off: exit status %d, and the go command would build with a profile: %v\n%s", code, strings.Contains(printed, "-pgo"), stderr)
	}
}

// writeCPUProfile writes a CPU profile of a moment of this process: a
// valid profile for the go command's -pgo, whatever its samples.
func writeCPUProfile(t *testing.T, file string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for start := time.Now(); time.Since(start) < 30*time.Millisecond; {
		sum += len(strings.Fields("a b c"))
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil || sum == 0 {
		t.Fatal(err)
	}
}

// checkStatic checks that the program bin needs no dynamic loader: pipegen
// build links without the C library when nothing needs cgo (netgo,
// osusergo), which starts faster and runs on any Linux.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(p.Open())
			t.Errorf("%s is linked dynamically (loader %s): want a static binary", bin, strings.TrimRight(string(interp), "\x00"))
		}
	}
}

func TestSchema(t *testing.T) {
	code, stdout, stderr := pipegen(t, "schema")
	if code != 0 || stdout != string(settings.JSONSchema()) || stderr != "" {
		t.Errorf("pipegen schema: exit status %d, %d bytes on stdout (want the %d of settings.JSONSchema), stderr:\n%s", code, len(stdout), len(settings.JSONSchema()), stderr)
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(stdout), &schema); err != nil || schema["$schema"] != settings.SchemaDraft {
		t.Errorf("pipegen schema does not print a %s schema: %v", settings.SchemaDraft, err)
	}
}

// TestBuildOutput: by default the binary is ./NAME, as the line says, and
// never inside a directory of that name; -o DIR/ and -o of an existing
// directory write DIR/NAME.
func TestBuildOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	pipeline, err := filepath.Abs(good)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := pipegen(t, "build", pipeline)
	if code != 0 {
		t.Fatalf("pipegen build: exit status %d\n%s", code, stderr)
	}
	bin, _, _ := strings.Cut(strings.TrimPrefix(stdout, "built "), " (")
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() || filepath.Clean(bin) != "good" {
		t.Errorf("pipegen build says %q, want the file ./good (%v)", stdout, err)
	}
	if err := os.Mkdir("bin", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ out, want string }{
		{"", "." + string(filepath.Separator) + "good"},
		{"bin", filepath.Join("bin", "good")}, // a directory
		{"out/", filepath.Join("out", "good")},
		{"prog", "prog"},
	} {
		if got, err := binaryPath(tc.out, "good"); err != nil || got != tc.want {
			t.Errorf("build -o %q writes %q (%v), want %q", tc.out, got, err, tc.want)
		}
	}

	// A directory named after the pipeline is in the way: build stops.
	os.Remove("good")
	if err := os.Mkdir("good", 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = pipegen(t, "build", pipeline)
	if want := "pipegen build: ./good is a directory"; code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) {
		t.Errorf("build with ./good a directory: exit status %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, want)
	}
	if entries, _ := os.ReadDir("good"); len(entries) != 0 {
		t.Errorf("build wrote into the directory good: %v", entries)
	}
}

// TestCheckWarning: a warning goes to check's standard error, and check
// still succeeds.
func TestCheckWarning(t *testing.T) {
	path := filepath.Join("..", "..", "golden", "reorder-warning", "pipeline.yaml")
	code, stdout, stderr := pipegen(t, "check", path)
	if code != 0 || !strings.Contains(stderr, "warning: `parallelism: 4` on \"priced\"") || !strings.Contains(stdout, "is fine") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, the warning on stderr", code, stdout, stderr)
	}
}
