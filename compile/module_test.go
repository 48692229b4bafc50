package compile_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
)

// userModule makes a module of its own, example.com/good, holding the
// good pipeline and its package, as a user's module would; the go
// commands run without GOFLAGS and with GOWORK=off, as in a fresh shell.
func userModule(t *testing.T) string {
	t.Helper()
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "")
	userCache(t)
	dir := t.TempDir()
	for _, name := range []string{"good.go", "pipeline.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "good", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shell(t, dir, "go mod init example.com/good")
	return dir
}

// shell runs a command line with sh in dir.
func shell(t *testing.T, dir, line string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s in %s: %v\n%s", line, dir, err, out)
	}
}

// fix returns the command that err says to run, the text between the
// backquotes after "run ".
func fix(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		t.Fatal("Build succeeded, want it to fail for the module's requirements")
	}
	_, after, ok := strings.Cut(err.Error(), "run `")
	cmd, _, ok2 := strings.Cut(after, "`")
	if !ok || !ok2 {
		t.Fatalf("Build: %v\nwant a command to run, in backquotes", err)
	}
	return cmd
}

// TestBuildSaysHowToRequirePipegen: when the user's module lacks a
// requirement the generated program needs, Build names the one command
// that adds it, and that command works.
func TestBuildSaysHowToRequirePipegen(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := userModule(t)
	build := func() error {
		t.Helper()
		res, err := compile.Generate(filepath.Join(dir, "pipeline.yaml"), compile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Build(filepath.Join(t.TempDir(), "good"))
	}

	// No requirement at all: go get -tool adds pipegen, at the version
	// of the pipegen that runs (a test's is "(devel)", so the latest).
	err = build()
	if got, want := fix(t, err), "go get -tool github.com/pipegen/pipegen/cmd/pipegen@latest"; got != want {
		t.Errorf("without a requirement: run %q, want %q\n%v", got, want, err)
	}
	if !strings.Contains(err.Error(), " in "+dir) {
		t.Errorf("the message does not say where to run it:\n%v", err)
	}

	// pipegen is not published, so the requirement the test adds points
	// at this checkout; go.sum is still missing.
	shell(t, dir, "go mod edit -require=github.com/pipegen/pipegen@v0.0.0 -replace=github.com/pipegen/pipegen="+root)
	cmd := fix(t, build())
	if want := "go mod edit -tool=github.com/pipegen/pipegen/cmd/pipegen && go mod tidy"; cmd != want {
		t.Errorf("with a requirement and no tool directive: run %q, want %q", cmd, want)
	}
	shell(t, dir, cmd)
	if err := build(); err != nil {
		t.Fatalf("Build after %s: %v", cmd, err)
	}

	// The tool directive is there; a lost go.sum wants only go mod tidy.
	if err := os.Remove(filepath.Join(dir, "go.sum")); err != nil {
		t.Fatal(err)
	}
	cmd = fix(t, build())
	if cmd != "go mod tidy" {
		t.Errorf("with the tool directive and no go.sum: run %q, want go mod tidy", cmd)
	}
	shell(t, dir, cmd)
	if err := build(); err != nil {
		t.Fatalf("Build after %s: %v", cmd, err)
	}
}
