package golden

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/goldenfile"
)

// Cases of the annotation front end have no pipeline.yaml: their input is
// the Go package in the case's directory, marked by a //pipegen:pipeline
// directive in one of its files. `pipegen generate -cmd` output goes to
// want/ with a .golden suffix, so that the go command does not compile
// the generated files alone, out of their package (want/NAME_pipegen.go.golden,
// want/cmd/NAME/main.go.golden); want/stderr.txt for a case that must fail.
// A case with run.txt is built with the generated files laid over the
// package (go build -overlay), vetted, and run like the YAML cases.

// goldenSuffix marks generated files in want/ of annotation cases.
const goldenSuffix = ".golden"

func annotationCases(t *testing.T) []string {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "testdata" {
			continue
		}
		if _, err := os.Stat(filepath.Join(e.Name(), "pipeline.yaml")); err == nil {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.HasPrefix(data, []byte("//pipegen:pipeline ")) || bytes.Contains(data, []byte("\n//pipegen:pipeline ")) {
				names = append(names, e.Name())
				break
			}
		}
	}
	if len(names) < 4 {
		t.Fatalf("found %d golden cases of the annotation front end, want at least 4", len(names))
	}
	return names
}

// driverCases also pin the file of generate -test (the test driver, in the
// package's tests); examples/sessions, fraud and cardblock compile and run
// such files.
var driverCases = map[string]bool{"annotated-process": true, "annotated-process-pair": true}

func TestGoldenAnnotations(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range annotationCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := filepath.Join(name, "want")
			got := map[string][]byte{}
			pk, err := compile.GeneratePackage(name, annotatedOptions())
			if err != nil {
				l, ok := compile.IsDiagnostics(err)
				if !ok {
					t.Fatalf("compiler failed without diagnostics: %v", err)
				}
				got["stderr.txt"] = []byte(l.Format(wd))
			} else {
				for _, f := range pk.Files {
					got[f.Name+goldenSuffix] = f.Content
				}
				if driverCases[name] {
					tk, err := compile.GeneratePackage(name, compile.PackageOptions{Options: compile.Options{Version: version, Command: "pipegen generate -test", Test: true}})
					if err != nil {
						t.Fatalf("generate -test: %v", err)
					}
					for _, f := range tk.Files {
						got[f.Name+goldenSuffix] = f.Content
					}
				}
			}
			compareTree(t, want, got)
			if _, err := os.Stat(filepath.Join(name, "run.txt")); err == nil && pk != nil {
				runAnnotated(t, name, pk)
			}
		})
	}
}

// annotatedOptions are the options of `pipegen generate -cmd`, which
// generates the annotation cases' want/.
func annotatedOptions() compile.PackageOptions {
	return compile.PackageOptions{Cmd: true, Options: compile.Options{Version: version, Command: "pipegen generate -cmd"}}
}

// compareTree checks that dir holds exactly the files of got (names
// slash-separated, relative to dir), but for output.txt, or rewrites it
// with -update.
func compareTree(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if _, ok := got[rel]; ok || rel == "output.txt" {
			return nil
		}
		if *goldenfile.Update {
			os.Remove(path)
		} else {
			t.Errorf("%s: the compiler no longer produces this file (run go test ./golden -update)", path)
		}
		return nil
	})
	for name, content := range got {
		goldenfile.Check(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
}

// runAnnotated vets the case's package with the generated files laid
// over it, and runs the command of its one pipeline, built with the
// others (programs_test.go) or, if that build failed, alone.
func runAnnotated(t *testing.T, name string, pk *compile.Package) {
	if testing.Short() {
		t.Skip("running goldens is skipped in -short mode")
	}
	if len(pk.Pipelines) != 1 {
		t.Fatalf("run.txt runs the case's one pipeline, but it has %d", len(pk.Pipelines))
	}
	tmp := t.TempDir()
	overlay := struct{ Replace map[string]string }{Replace: map[string]string{}}
	for _, f := range pk.Files {
		src := filepath.Join(tmp, strings.ReplaceAll(f.Name, "/", "_"))
		if err := os.WriteFile(src, f.Content, 0o644); err != nil {
			t.Fatal(err)
		}
		abs, err := filepath.Abs(filepath.Join(name, filepath.FromSlash(f.Name)))
		if err != nil {
			t.Fatal(err)
		}
		overlay.Replace[abs] = src
	}
	data, err := json.Marshal(overlay)
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The cmd directory exists only in the overlay, where go build finds
	// it but go vet cannot run: vet the package with its generated file.
	cmd := "./" + filepath.ToSlash(filepath.Join(name, filepath.Dir(codegen.CmdFile(pk.Pipelines[0].IR.Name))))
	if out, err := exec.Command("go", "vet", "-overlay", ov, "./"+name).CombinedOutput(); err != nil {
		t.Errorf("go vet of the generated code failed: %v\n%s", err, out)
	}
	runProgram(t, name, program(t, wantKey(name), "-overlay", ov, cmd))
}
