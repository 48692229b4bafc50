package golden

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/dsl"
	"github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/internal/multicall"
	"github.com/pipegen/pipegen/ir"
)

// The programs the YAML cases run, each case's want/ and the same
// pipeline generated for the other state backend, are linked into one
// binary (internal/multicall): a link of a program costs about 1.7
// CPU-seconds on a 2-core machine, most of what building it costs, and
// golden has about fifty. The generated files compared with want/ are the
// ones compiled (but for the package clause and main's name); go vet
// ./... checks want/ as the main package it is. If that build fails, each
// case builds its own program, so that the failure is reported by the
// case it belongs to.
//
// The annotation cases' programs are in the same binary: the files
// generated into a case's package are laid over it (multicall's Overlay).
//
// The programs' packages are compiled without optimisations or inlining
// (-N -l): these tests compare what the programs print and write, which
// the optimiser does not change. After a change to the runtime, when
// every program's package is compiled again, golden's tests took 87-95
// CPU-seconds instead of 111-130, and 49-53 s instead of 64-76 (2 cores,
// 3 pairs taken in turn; with the links of TestGeneratedCodeInlines and
// TestDeterministicRunningTotals gone too), and with the annotation
// cases in this build 72-77 instead of 86-89 (2 pairs); warm, 21 CPU-s
// instead of 28-30. TestGeneratedCodeInlines compiles its programs as
// pipegen build does, and the tests of examples/ and the crash tests
// build theirs so too.

// programs is the one build of every case's programs.
var programs struct {
	once sync.Once
	dir  string            // the binaries, removed by TestMain
	bins map[string]string // program key -> binary
	err  error
}

// runByTests are the cases without run.txt whose want/ program a test
// of this package runs (TestDeterministicRunningTotals): it is built
// with the others.
var runByTests = map[string]bool{"running-totals": true}

// wantKey and otherKey name a case's programs in programs.bins.
func wantKey(name string) string  { return name }
func otherKey(name string) string { return name + "-other-backend" }

// builtProgram returns the binary of the program key, built with the
// others, or "" if the one build failed or (-update) the want/ files it
// would build may be rewritten by the test.
func builtProgram(t *testing.T, key string) string {
	buildPrograms(t)
	if programs.err != nil {
		return ""
	}
	return programs.bins[key]
}

// program returns the binary of the program key from the one build or,
// when that build failed, builds it alone with go build and args (its
// flags, then the package), so that a failure is reported by the case it
// belongs to.
func program(t *testing.T, key string, args ...string) string {
	if bin := builtProgram(t, key); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "prog")
	if out, err := exec.Command("go", append([]string{"build", "-o", bin}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("go build of the golden program failed: %v\n%s", err, out)
	}
	return bin
}

func buildPrograms(t *testing.T) {
	programs.once.Do(func() {
		programs.err = buildAll(t)
		if programs.err != nil {
			t.Logf("the golden programs are built one by one: %v", programs.err)
		}
	})
}

// buildAll generates each YAML case's program for the other state backend
// and links it and the case's want/, and the annotation cases' programs,
// into one binary.
func buildAll(t *testing.T) error {
	module, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "golden-programs-*")
	if err != nil {
		return err
	}
	// Not t.TempDir: the binaries outlive the test that builds them.
	programs.dir = tmp
	var progs []multicall.Program
	for _, name := range cases(t) {
		_, err := os.Stat(filepath.Join(name, "run.txt"))
		runs := err == nil
		if !runs && !runByTests[name] {
			continue
		}
		// want/ as committed: the build of the case's own files.
		if !*goldenfile.Update {
			files := map[string][]byte{}
			srcs, _ := filepath.Glob(filepath.Join(name, "want", "*.go"))
			for _, src := range srcs {
				if !strings.HasSuffix(src, "_test.go") {
					data, err := os.ReadFile(src)
					if err != nil {
						return err
					}
					files[filepath.Base(src)] = data
				}
			}
			progs = append(progs, multicall.Program{Name: wantKey(name), Files: files})
		}
		if !runs {
			continue
		}
		res, err := generateOther(name)
		if err != nil {
			return err
		}
		if res == nil {
			continue
		}
		files := map[string][]byte{}
		for _, f := range res.Files {
			files[f.Name] = f.Content
		}
		progs = append(progs, multicall.Program{Name: otherKey(name), Files: files})
	}
	// The annotation cases that run: the command generated for the
	// case's pipeline is a program, and the files generated into the
	// case's package are laid over it.
	overlay := map[string][]byte{}
	for _, name := range annotationCases(t) {
		if _, err := os.Stat(filepath.Join(name, "run.txt")); err != nil {
			continue
		}
		pk, err := compile.GeneratePackage(name, annotatedOptions())
		if err != nil || len(pk.Pipelines) != 1 {
			continue // the case's test says what is wrong
		}
		cmd := codegen.CmdFile(pk.Pipelines[0].IR.Name)
		files := map[string][]byte{}
		for _, f := range pk.Files {
			if f.Name == cmd {
				files[path.Base(cmd)] = f.Content
				continue
			}
			abs, err := filepath.Abs(filepath.Join(name, filepath.FromSlash(f.Name)))
			if err != nil {
				return err
			}
			overlay[abs] = f.Content
		}
		progs = append(progs, multicall.Program{Name: wantKey(name), Files: files})
	}
	built, err := multicall.Build(progs, multicall.Options{ModuleDir: module, ModulePath: "github.com/pipegen/pipegen", Dir: tmp, Gcflags: "-N -l", Overlay: overlay})
	if err != nil {
		return err
	}
	programs.bins = built.Paths
	return nil
}

// generateOther generates the case's pipeline for the other state backend
// than its own (pebble for a pipeline on memory, memory for one on
// pebble), or returns nil if it has no keyed state.
func generateOther(name string) (*compile.Result, error) {
	res, err := compile.Generate(filepath.Join(name, "pipeline.yaml"), compile.Options{Version: version})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if !slices.ContainsFunc(res.IR.Nodes, func(n *ir.Node) bool { return n.Kind.Stateful() }) {
		return nil, nil
	}
	other := "pebble"
	if res.IR.StateBackend == "pebble" {
		other = "memory"
	}
	res, err = compile.Generate(filepath.Join(name, "pipeline.yaml"), compile.Options{Version: version, StateBackend: other})
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %v", name, other, err)
	}
	return res, nil
}

// TestMain loads the Go packages of the cases with one go list, which the
// compiles of every test then reuse (each load of its own ran go list,
// more than half of this package's CPU), and removes the programs built
// for the cases.
func TestMain(m *testing.M) {
	if err := dsl.Preload(packageDirs()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if programs.dir != "" {
		os.RemoveAll(programs.dir)
	}
	os.Exit(code)
}

// packageDirs are the folders of the cases that hold Go files: their
// packages.
func packageDirs() []string {
	entries, _ := os.ReadDir(".")
	var dirs []string
	for _, e := range entries {
		if files, _ := filepath.Glob(filepath.Join(e.Name(), "*.go")); e.IsDir() && e.Name() != "testdata" && len(files) > 0 {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}
