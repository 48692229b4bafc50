package golden

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/ir"
)

// The programs the YAML cases run, each case's want/ and the same
// pipeline generated for the other state backend, are built by one go
// command: a go command per program loaded the packages and checked the
// build cache once per program, about half a CPU-second each, a third of
// what building and linking the program costs (golden has about fifty).
// The go command links the programs in parallel itself. If that build
// fails, each case builds its own program, so that the failure is
// reported by the case it belongs to.

// buildDir is where the programs' packages appear in the module, only in
// the go command's overlay: nothing is written there.
const buildDir = "golden_build"

// programs is the one build of every YAML case's programs.
var programs struct {
	once sync.Once
	dir  string            // the binaries, removed by TestMain
	bins map[string]string // program key -> binary
	err  error
}

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

func buildPrograms(t *testing.T) {
	programs.once.Do(func() {
		programs.err = buildAll(t)
		if programs.err != nil {
			t.Logf("the golden programs are built one by one: %v", programs.err)
		}
	})
}

// buildAll generates each YAML case's program for the other state backend
// and builds it and the case's want/ in one go command.
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
	overlay := struct{ Replace map[string]string }{Replace: map[string]string{}}
	var pkgs []string
	add := func(key string, files map[string]string) {
		for name, src := range files {
			overlay.Replace[filepath.Join(module, buildDir, key, name)] = src
		}
		pkgs = append(pkgs, "./"+buildDir+"/"+key)
	}
	for _, name := range cases(t) {
		if _, err := os.Stat(filepath.Join(name, "run.txt")); err != nil {
			continue
		}
		// want/ as committed: the build of the case's own files.
		if !*goldenfile.Update {
			files := map[string]string{}
			srcs, _ := filepath.Glob(filepath.Join(name, "want", "*.go"))
			for _, src := range srcs {
				if !strings.HasSuffix(src, "_test.go") {
					abs, err := filepath.Abs(src)
					if err != nil {
						return err
					}
					files[filepath.Base(src)] = abs
				}
			}
			add(wantKey(name), files)
		}
		res, err := generateOther(name)
		if err != nil {
			return err
		}
		if res == nil {
			continue
		}
		files := map[string]string{}
		for _, f := range res.Files {
			src := filepath.Join(tmp, otherKey(name)+"-"+f.Name)
			if err := os.WriteFile(src, f.Content, 0o644); err != nil {
				return err
			}
			files[f.Name] = src
		}
		add(otherKey(name), files)
	}
	data, err := json.Marshal(overlay)
	if err != nil {
		return err
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, data, 0o644); err != nil {
		return err
	}
	bin := filepath.Join(tmp, "bin")
	cmd := exec.Command("go", append([]string{"build", "-overlay", ov, "-o", bin + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = module
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of %d golden programs: %v\n%s", len(pkgs), err, out)
	}
	programs.bins = map[string]string{}
	for _, p := range pkgs {
		key := filepath.Base(p)
		programs.bins[key] = filepath.Join(bin, key)
	}
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

// TestMain removes the programs built for the cases.
func TestMain(m *testing.M) {
	code := m.Run()
	if programs.dir != "" {
		os.RemoveAll(programs.dir)
	}
	os.Exit(code)
}
