package compile_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/compile"
)

// annotated is a package with one pipeline written as directives; NAME is
// replaced by the pipeline's name.
const annotated = `package lines

import "strings"

//pipegen:pipeline NAME
//pipegen:source lines connector=file path=in.txt
//pipegen:sink out input=upper connector=stdout

// Upper upper-cases a line.
//
//pipegen:map upper input=lines
func Upper(s string) string { return strings.ToUpper(s) }
`

// tempPackage makes a module with one package, the Go files given, in a
// temporary directory, and returns the directory.
func tempPackage(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/lines\n\ngo 1.26\n"
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func generate(t *testing.T, dir string, cmd bool) *compile.Package {
	t.Helper()
	pk, err := compile.GeneratePackage(dir, compile.PackageOptions{Cmd: cmd})
	if err != nil {
		t.Fatalf("GeneratePackage: %v", err)
	}
	return pk
}

func plan(t *testing.T, pk *compile.Package) []string {
	t.Helper()
	changes, err := pk.Plan()
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return describe(changes)
}

func commit(t *testing.T, pk *compile.Package) []string {
	t.Helper()
	changes, err := pk.Commit()
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return describe(changes)
}

func describe(changes []compile.Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Path+": "+string(c.Kind))
	}
	return out
}

// files lists the files under dir but go.mod and the Go files given.
func files(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel != "go.mod" && rel != "lines.go" {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestGeneratePackageWritesAndChecks(t *testing.T) {
	dir := tempPackage(t, map[string]string{"lines.go": strings.ReplaceAll(annotated, "NAME", "shout")})
	pk := generate(t, dir, true)
	if len(pk.Pipelines) != 1 || pk.Pipelines[0].IR.Name != "shout" || pk.PkgPath != "example.com/lines" {
		t.Fatalf("compiled %d pipelines of %s", len(pk.Pipelines), pk.PkgPath)
	}
	want := []string{"cmd/shout/main.go: new", "shout_pipegen.go: new"}
	if got := plan(t, pk); !slices.Equal(got, want) {
		t.Errorf("Plan before writing: %q, want %q", got, want)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("Plan wrote %v", got)
	}
	if got := commit(t, pk); !slices.Equal(got, want) {
		t.Errorf("Commit: %q, want %q", got, want)
	}
	for _, name := range []string{"shout_pipegen.go", "cmd/shout/main.go"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), codegen.Header+"\n// source: lines.go\n") {
			t.Errorf("%s starts with %q", name, strings.SplitN(string(data), "\n", 3)[:2])
		}
	}
	// Up to date: nothing to do, also for a fresh compile.
	if got := plan(t, generate(t, dir, true)); len(got) != 0 {
		t.Errorf("Plan after Commit: %q, want nothing", got)
	}

	// A hand edit makes the file stale; Commit puts it back.
	path := filepath.Join(dir, "shout_pipegen.go")
	data, _ := os.ReadFile(path)
	writeFile(t, path, string(data)+"// edited\n")
	pk = generate(t, dir, true)
	if got := plan(t, pk); !slices.Equal(got, []string{"shout_pipegen.go: changed"}) {
		t.Errorf("Plan after an edit: %q", got)
	}
	commit(t, pk)
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Error("Commit did not restore the edited file")
	}
}

// TestGeneratePackageIgnoresItsFiles: the generated files are left out
// when the package is loaded (build tag), so that a generated file that
// no longer compiles does not stop the next generate.
func TestGeneratePackageIgnoresItsFiles(t *testing.T) {
	dir := tempPackage(t, map[string]string{
		"lines.go": strings.ReplaceAll(annotated, "NAME", "shout"),
		"shout_pipegen.go": codegen.Header + "\n\n//go:build !" + codegen.BuildTag + "\n\npackage lines\n\n" +
			"func RunShout(args []string) int { return Gone(args) }\n",
	})
	pk := generate(t, dir, false)
	if got := plan(t, pk); !slices.Equal(got, []string{"shout_pipegen.go: changed"}) {
		t.Errorf("Plan: %q", got)
	}
}

func TestGeneratePackageOwnership(t *testing.T) {
	handWritten := "package lines\n\n// shout_pipegen.go is mine.\nfunc Mine() {}\n"
	dir := tempPackage(t, map[string]string{
		"lines.go":         strings.ReplaceAll(annotated, "NAME", "shout"),
		"shout_pipegen.go": handWritten,
	})
	pk := generate(t, dir, true)
	for _, f := range []func() ([]compile.Change, error){pk.Plan, pk.Commit} {
		_, err := f()
		l, ok := compile.IsDiagnostics(err)
		if !ok {
			t.Fatalf("a hand-written file of the generated name: %v, want diagnostics", err)
		}
		if msg := l.Format(dir); !strings.HasPrefix(msg, "shout_pipegen.go:1: the file exists and pipegen did not generate it") {
			t.Errorf("diagnostics:\n%s", msg)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "shout_pipegen.go")); string(data) != handWritten {
		t.Error("the hand-written file was overwritten")
	}
	if got := files(t, dir); !slices.Equal(got, []string{"shout_pipegen.go"}) {
		t.Errorf("Commit wrote %v after refusing", got)
	}

	// A main generated for another package is not ours either.
	other := codegen.Header + "\n\npackage main\n\nimport \"example.com/other\"\n\nfunc main() { other.RunShout(nil) }\n"
	dir = tempPackage(t, map[string]string{
		"lines.go":          strings.ReplaceAll(annotated, "NAME", "shout"),
		"cmd/shout/main.go": other,
		"cmd/old/main.go":   other,
	})
	_, err := generate(t, dir, true).Commit()
	if l, ok := compile.IsDiagnostics(err); !ok || !strings.Contains(l.Format(dir), "pipegen generated this file for another package") {
		t.Errorf("Commit over another package's main: %v", err)
	}
	// Without -cmd, its main is left alone, and so is cmd/old.
	if got := commit(t, generate(t, dir, false)); !slices.Equal(got, []string{"shout_pipegen.go: new"}) {
		t.Errorf("Commit: %q", got)
	}
}

func TestGeneratePackageRemovesStaleFiles(t *testing.T) {
	dir := tempPackage(t, map[string]string{"lines.go": strings.ReplaceAll(annotated, "NAME", "shout")})
	commit(t, generate(t, dir, true))

	// The pipeline is renamed: the old files go, the new ones come.
	writeFile(t, filepath.Join(dir, "lines.go"), strings.ReplaceAll(annotated, "NAME", "yell"))
	got := commit(t, generate(t, dir, true))
	want := []string{"cmd/shout/main.go: no longer generated", "cmd/yell/main.go: new", "shout_pipegen.go: no longer generated", "yell_pipegen.go: new"}
	if !slices.Equal(got, want) {
		t.Errorf("Commit after a rename: %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd", "shout")); !os.IsNotExist(err) {
		t.Errorf("cmd/shout was left behind (%v)", err)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"cmd/yell/main.go", "yell_pipegen.go"}) {
		t.Errorf("files after the rename: %v", got)
	}

	// Without -cmd the main goes, and the empty cmd directory with it.
	if got := commit(t, generate(t, dir, false)); !slices.Equal(got, []string{"cmd/yell/main.go: no longer generated"}) {
		t.Errorf("Commit without -cmd: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd")); !os.IsNotExist(err) {
		t.Errorf("the empty cmd directory was left behind (%v)", err)
	}

	// Without any pipeline, the last generated file goes.
	writeFile(t, filepath.Join(dir, "lines.go"), "package lines\n")
	if got := commit(t, generate(t, dir, false)); !slices.Equal(got, []string{"yell_pipegen.go: no longer generated"}) {
		t.Errorf("Commit without pipelines: %q", got)
	}
	// And then there is nothing to generate: an error.
	if _, err := compile.GeneratePackage(dir, compile.PackageOptions{}); err == nil || !strings.Contains(err.Error(), "has no //pipegen:pipeline directive") {
		t.Errorf("GeneratePackage without pipelines: %v", err)
	}
}

func TestCheckPackage(t *testing.T) {
	dir := tempPackage(t, map[string]string{"lines.go": strings.ReplaceAll(annotated, "NAME", "shout")})
	ps, err := compile.CheckPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Name != "shout" || len(ps[0].Nodes) != 3 || ps[0].Source != "lines.go" {
		t.Errorf("CheckPackage: %+v", ps)
	}
	writeFile(t, filepath.Join(dir, "lines.go"), strings.ReplaceAll(strings.ReplaceAll(annotated, "NAME", "shout"), "input=lines", "input=line"))
	_, err = compile.CheckPackage(dir)
	l, ok := compile.IsDiagnostics(err)
	if !ok {
		t.Fatalf("CheckPackage: %v, want diagnostics", err)
	}
	if got, want := l.Format(dir), "lines.go:11:27: unknown input \"line\", did you mean \"lines\"?\n"; got != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
}

func TestResultStale(t *testing.T) {
	res, err := compile.Generate(good, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	changes, err := res.Stale(dir)
	if err != nil || len(changes) != 2 || changes[0].Kind != compile.Create {
		t.Fatalf("Stale of an empty directory: %v, %v", describe(changes), err)
	}
	if err := res.Commit(dir); err != nil {
		t.Fatal(err)
	}
	if changes, err := res.Stale(dir); err != nil || len(changes) != 0 {
		t.Errorf("Stale after Commit: %v, %v", describe(changes), err)
	}
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n")
	if changes, err := res.Stale(dir); err != nil || !slices.Equal(describe(changes), []string{"main.go: changed"}) {
		t.Errorf("Stale after an edit: %v, %v", describe(changes), err)
	}
}
