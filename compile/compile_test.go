package compile_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/diag"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/ir"
)

var (
	good = filepath.Join("testdata", "good", "pipeline.yaml")
	bad  = filepath.Join("testdata", "bad", "pipeline.yaml")
)

func TestCheckGood(t *testing.T) {
	p, err := compile.Check(good)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	var names []string
	for _, n := range p.Nodes {
		names = append(names, n.Name)
	}
	if p.Name != "good" || !slices.Equal(names, []string{"numbers", "squares", "out"}) {
		t.Errorf("Check: pipeline %q with nodes %v", p.Name, names)
	}
	if p.Package.Path != "github.com/pipegen/pipegen/compile/testdata/good" {
		t.Errorf("package %q", p.Package.Path)
	}
}

func TestCheckDiagnostics(t *testing.T) {
	p, err := compile.Check(bad)
	if p != nil {
		t.Error("Check returned an IR for a pipeline with problems")
	}
	l, ok := compile.IsDiagnostics(err)
	if !ok {
		t.Fatalf("Check: %v (%T), want diagnostics", err, err)
	}
	var typed *diag.List
	if !errors.As(err, &typed) || typed != l {
		t.Errorf("the error is not the *diag.List IsDiagnostics returns")
	}
	// Both the structural problem and the type problem, in one run.
	want := bad + `:7:5: unknown key "rte" in source "numbers", did you mean "rate"? (the generator source takes generate, rate)` + "\n" +
		bad + `:11:10: unknown function "Sqare" in package github.com/pipegen/pipegen/compile/testdata/bad, did you mean "Square"?` + "\n"
	if got := l.Format(""); got != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
}

func TestCheckOtherVersion(t *testing.T) {
	// A file of another version is not checked further: there is no Go
	// package next to it, and that is not reported.
	path := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(path, []byte("version: 2\nname: next\nwhatever: [\n  1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := compile.Check(path)
	l, ok := compile.IsDiagnostics(err)
	if !ok {
		t.Fatalf("Check: %v, want diagnostics", err)
	}
	if got, want := l.Format(""), path+":1:10: unsupported pipeline version \"2\": this pipegen reads version 1\n"; got != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
}

func TestCheckMissingFile(t *testing.T) {
	_, err := compile.Check(filepath.Join("testdata", "nothing", "pipeline.yaml"))
	if err == nil {
		t.Fatal("Check of a missing file succeeded")
	}
	if _, ok := compile.IsDiagnostics(err); ok {
		t.Errorf("a missing file is reported as diagnostics: %v", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Check: %v, want an error that wraps os.ErrNotExist", err)
	}
	if _, ok := compile.IsDiagnostics(nil); ok {
		t.Error("IsDiagnostics(nil) is true")
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestGenerateAndCommit(t *testing.T) {
	before := listDir(t, filepath.Dir(good))
	res, err := compile.Generate(good, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if after := listDir(t, filepath.Dir(good)); !slices.Equal(before, after) {
		t.Errorf("Generate wrote into the pipeline's directory: %v, then %v", before, after)
	}
	out := filepath.Join(t.TempDir(), "gen", "good")
	for range 2 { // the second time over the files of the first
		if err := res.Commit(out); err != nil {
			t.Fatalf("Commit: %v", err)
		}
		if got := listDir(t, out); !slices.Equal(got, []string{"main.go", "pipeline.go"}) {
			t.Fatalf("Commit wrote %v, want exactly main.go and pipeline.go (no temporary files)", got)
		}
		for _, f := range res.Files {
			data, err := os.ReadFile(filepath.Join(out, f.Name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, f.Content) {
				t.Errorf("%s on disk differs from the generated file", f.Name)
			}
		}
	}
	// An old file is replaced whole.
	stale := filepath.Join(out, "main.go")
	if err := os.WriteFile(stale, bytes.Repeat([]byte("x"), 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(out); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(stale); !bytes.Equal(data, res.Files[0].Content) {
		t.Errorf("main.go was not replaced by the generated one")
	}
}

func TestCommitFailureLeavesNoTemporaryFiles(t *testing.T) {
	res, err := compile.Generate(good, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// pipeline.go cannot be replaced: a directory is in the way.
	if err := os.MkdirAll(filepath.Join(out, "pipeline.go", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(out); err == nil {
		t.Fatal("Commit over a directory succeeded")
	}
	for _, name := range listDir(t, out) {
		if strings.HasPrefix(name, ".") {
			t.Errorf("Commit left %s behind", name)
		}
	}
}

func TestGenerateFailureWritesNothing(t *testing.T) {
	before := listDir(t, filepath.Dir(bad))
	res, err := compile.Generate(bad, compile.Options{})
	if res != nil {
		t.Error("Generate returned files for a pipeline with problems")
	}
	if _, ok := compile.IsDiagnostics(err); !ok {
		t.Errorf("Generate: %v, want diagnostics", err)
	}
	if after := listDir(t, filepath.Dir(bad)); !slices.Equal(before, after) {
		t.Errorf("Generate wrote into the pipeline's directory: %v, then %v", before, after)
	}
}

func TestDumpIR(t *testing.T) {
	res, err := compile.Generate(good, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile.DumpIR(res.IR)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Errorf("the dump does not end in a newline")
	}
	var p ir.Pipeline
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("the dump is not JSON of an ir.Pipeline: %v", err)
	}
	if p.Name != "good" || len(p.Nodes) != 3 || p.Nodes[1].Fn == nil || p.Nodes[1].Fn.Name != "Square" {
		t.Errorf("decoded dump: %+v", p)
	}
	if bytes.Contains(b, []byte(res.IR.ModuleDir)) {
		t.Errorf("the dump holds the module directory %s", res.IR.ModuleDir)
	}
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	res, err := compile.Generate(good, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "good")
	if err := res.Build(bin); err != nil {
		t.Fatalf("Build: %v", err)
	}
	// Nothing is left in the module: the generated package was only in
	// the go command's overlay.
	if _, err := os.Stat(filepath.Join(res.IR.ModuleDir, "pipegen_build")); !os.IsNotExist(err) {
		t.Errorf("Build left pipegen_build in the module (%v)", err)
	}
	help, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("good --help: %v\n%s", err, help)
	}
	if !strings.Contains(string(help), "good") || !strings.Contains(string(help), "run") {
		t.Errorf("good --help says:\n%s", help)
	}
	cmd := exec.Command(bin, "run", "--quiet")
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("good run: %v", err)
	}
	if got, want := string(out), "0\n1\n4\n9\n16\n"; got != want {
		t.Errorf("good run printed %q, want %q", got, want)
	}
}

func TestBuildOutsideModule(t *testing.T) {
	res := &compile.Result{IR: &ir.Pipeline{Name: "x"}}
	err := res.Build(filepath.Join(t.TempDir(), "x"))
	if err == nil || !strings.Contains(err.Error(), "go mod init") {
		t.Errorf("Build without a module: %v, want advice to run go mod init", err)
	}
}

// TestWarnings compiles a pipeline with a warning, as a pipeline file and
// as directives: it compiles, the warning is printed on compile.Stderr in
// the syntax of its front end, and Generate keeps it in Result.Warnings.
func TestWarnings(t *testing.T) {
	var printed bytes.Buffer
	compile.Stderr = &printed
	t.Cleanup(func() { compile.Stderr = os.Stderr })
	dir := filepath.Join("testdata", "reorder")
	file := filepath.Join(dir, "pipeline.yaml")
	const spread = ` on "priced" spreads the records of "orders" over its subtasks, so reduce "running" may see each key's records in a different order from run to run: drop it to run "priced" at the parallelism of "orders", fused behind it, or key the records before they are spread: a process keyed like "running" in place of "priced" keeps each key on one subtask` + "\n"
	fromYAML := file + ":11:18: warning: `parallelism: 4`" + spread
	if p, err := compile.Check(file); err != nil || p == nil {
		t.Fatalf("Check(%s) = %v, %v; want the IR and no error: a warning stops nothing", file, p, err)
	}
	if got := printed.String(); got != fromYAML {
		t.Errorf("Check printed:\n%s\nwant:\n%s", got, fromYAML)
	}
	printed.Reset()
	res, err := compile.Generate(file, compile.Options{})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := printed.String(); got != fromYAML {
		t.Errorf("Generate printed:\n%s\nwant:\n%s", got, fromYAML)
	}
	if got := res.Warnings.Format(""); got != fromYAML {
		t.Errorf("Result.Warnings:\n%s\nwant:\n%s", got, fromYAML)
	}
	printed.Reset()
	if _, err := compile.CheckPackage(dir); err != nil {
		t.Fatalf("CheckPackage(%s): %v", dir, err)
	}
	fromGo := filepath.Join(dir, "reorder.go") + ":20:47: warning: parallelism=4" + spread
	if got := printed.String(); got != fromGo {
		t.Errorf("CheckPackage printed:\n%s\nwant:\n%s", got, fromGo)
	}
}

// TestUnreadWarnings checks the warning about nodes that reach no sink in
// both front ends: golden/unread-warning (YAML, whose want/stderr.txt pins
// the text) and golden/annotated-unread, as directives, warned at the
// directive's name, once for "audit" and the "flagged" behind it.
func TestUnreadWarnings(t *testing.T) {
	var printed bytes.Buffer
	compile.Stderr = &printed
	t.Cleanup(func() { compile.Stderr = os.Stderr })
	dir := filepath.Join("..", "golden", "annotated-unread")
	if _, err := compile.CheckPackage(dir); err != nil {
		t.Fatalf("CheckPackage(%s): %v", dir, err)
	}
	file := filepath.Join(dir, "unread.go")
	want := file + `:26:18: warning: the records of operator filter "audit" reach no sink, nor do those of the nodes that read it ("flagged"): they are computed and dropped; add a sink that reads it (input=audit), or remove it` + "\n"
	if got := printed.String(); got != want {
		t.Errorf("CheckPackage printed:\n%s\nwant:\n%s", got, want)
	}
}
