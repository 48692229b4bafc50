package golden

import (
	"bytes"
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
// pipeline generated for the other state backend, are linked into one
// binary: a link of a program costs about 1.7 CPU-seconds on a 2-core
// machine, most of what building it costs, and golden has about fifty.
// Each program's package is laid into the go command's overlay as a
// package of its own (golden_build/KEY) whose package clause names it
// program and whose func main is Main; a generated main package calls the
// Main of the program named by the name it was run by (os.Args[0]), and
// each program's path is a symbolic link to that one binary, named after
// it. Nothing else changes: the generated files are the ones compared
// with want/ (main.go only calls runtime.Main), and go vet ./... checks
// want/ as the main package it is. If that build fails, each case builds
// its own program, so that the failure is reported by the case it belongs
// to.

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
// and links it and the case's want/ into one binary.
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
	lay := func(rel string, src []byte) error {
		file := filepath.Join(tmp, "src", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		overlay.Replace[filepath.Join(module, buildDir, filepath.FromSlash(rel))] = file
		return os.WriteFile(file, src, 0o644)
	}
	var keys []string
	add := func(key string, files map[string][]byte) error {
		mains := 0
		for name, src := range files {
			lib, isMain, err := asLibrary(src)
			if err != nil {
				return fmt.Errorf("%s: %s: %v", key, name, err)
			}
			if isMain {
				mains++
			}
			if err := lay(key+"/"+name, lib); err != nil {
				return err
			}
		}
		if mains != 1 {
			return fmt.Errorf("%s: %d files declare func main, want 1", key, mains)
		}
		keys = append(keys, key)
		return nil
	}
	for _, name := range cases(t) {
		if _, err := os.Stat(filepath.Join(name, "run.txt")); err != nil {
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
			if err := add(wantKey(name), files); err != nil {
				return err
			}
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
		if err := add(otherKey(name), files); err != nil {
			return err
		}
	}
	if err := lay("all/main.go", dispatcher(keys)); err != nil {
		return err
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
	all := filepath.Join(bin, "golden-programs")
	cmd := exec.Command("go", "build", "-overlay", ov, "-o", all, "./"+buildDir+"/all")
	cmd.Dir = module
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of %d golden programs: %v\n%s", len(keys), err, out)
	}
	programs.bins = map[string]string{}
	for _, key := range keys {
		link := filepath.Join(bin, key)
		if err := os.Symlink(all, link); err != nil {
			return err
		}
		programs.bins[key] = link
	}
	return nil
}

// asLibrary turns a file of a main package into one of package program
// whose func main, if the file declares it, is Main.
func asLibrary(src []byte) (lib []byte, isMain bool, err error) {
	const clause, mainFunc = "\npackage main\n", "\nfunc main() {\n"
	if bytes.Count(src, []byte(clause)) != 1 {
		return nil, false, fmt.Errorf("no package clause %q", strings.TrimSpace(clause))
	}
	lib = bytes.Replace(src, []byte(clause), []byte("\npackage program\n"), 1)
	switch bytes.Count(lib, []byte(mainFunc)) {
	case 0:
		return lib, false, nil
	case 1:
		return bytes.Replace(lib, []byte(mainFunc), []byte("\nfunc Main() {\n"), 1), true, nil
	}
	return nil, false, fmt.Errorf("func main declared more than once")
}

// dispatcher is the main package of the binary of every program: it runs
// the program whose key is the name it was run by.
func dispatcher(keys []string) []byte {
	var b bytes.Buffer
	b.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"path/filepath\"\n\n")
	for i, key := range keys {
		fmt.Fprintf(&b, "\tp%d %q\n", i, "github.com/pipegen/pipegen/"+buildDir+"/"+key)
	}
	b.WriteString(")\n\nvar programs = map[string]func(){\n")
	for i, key := range keys {
		fmt.Fprintf(&b, "\t%q: p%d.Main,\n", key, i)
	}
	b.WriteString("}\n\nfunc main() {\n\tmain, ok := programs[filepath.Base(os.Args[0])]\n\tif !ok {\n\t\tfmt.Fprintf(os.Stderr, \"%s: no golden program of this name\\n\", os.Args[0])\n\t\tos.Exit(2)\n\t}\n\tmain()\n}\n")
	return b.Bytes()
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
