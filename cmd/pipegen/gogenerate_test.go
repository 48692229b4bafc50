package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const annotated = `package lines

import "strings"

//pipegen:pipeline shout
//pipegen:source lines connector=file path=in.txt
//pipegen:sink out input=upper connector=stdout

// Upper upper-cases a line.
//
//pipegen:map upper input=lines
func Upper(s string) string { return strings.ToUpper(s) }
`

// annotatedPackage writes a module with an annotated package into a
// temporary directory.
func annotatedPackage(t *testing.T) string {
	dir := t.TempDir()
	for name, content := range map[string]string{"go.mod": "module example.com/lines\n\ngo 1.26\n", "lines.go": annotated} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGenerateAnnotatedPackage(t *testing.T) {
	dir := annotatedPackage(t)
	code, stdout, stderr := pipegen(t, "check", "-pkg", dir)
	if code != 0 || !strings.HasPrefix(stdout, dir+": pipeline shout is fine: 3 nodes\n  fused, one goroutine per subtask of ") {
		t.Errorf("check -pkg: exit status %d, stdout %q\n%s", code, stdout, stderr)
	}

	// Stale before anything is generated: -check lists the files and
	// writes nothing.
	code, stdout, stderr = pipegen(t, "generate", "-pkg", dir, "-cmd", "-check")
	want := "pipegen generate: 2 generated files are not up to date: run pipegen generate (go generate) and commit the result\n" +
		"\t" + filepath.Join(dir, "cmd", "shout", "main.go") + ": new\n" +
		"\t" + filepath.Join(dir, "shout_pipegen.go") + ": new\n"
	if code != 1 || stderr != want || stdout != "" {
		t.Errorf("generate -check: exit status %d, stdout %q, stderr\n%s\nwant\n%s", code, stdout, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "shout_pipegen.go")); !os.IsNotExist(err) {
		t.Errorf("generate -check wrote a file (%v)", err)
	}

	code, stdout, stderr = pipegen(t, "generate", "-pkg", dir, "-cmd")
	want = "wrote " + filepath.Join(dir, "cmd", "shout", "main.go") + "\nwrote " + filepath.Join(dir, "shout_pipegen.go") + "\n"
	if code != 0 || stdout != want {
		t.Errorf("generate: exit status %d, stdout %q, want %q\n%s", code, stdout, want, stderr)
	}
	// The header records the command as go generate runs it, in the
	// package's directory: without -pkg.
	for _, name := range []string{"shout_pipegen.go", filepath.Join("cmd", "shout", "main.go")} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if line := strings.Split(string(data), "\n")[2]; !strings.HasPrefix(line, "// version: pipegen ") || !strings.HasSuffix(line, "; command: pipegen generate -cmd") {
			t.Errorf("%s: the third line is %q, want the version and the command", name, line)
		}
	}
	// Up to date: quiet, exit 0.
	for _, args := range [][]string{{"generate", "-pkg", dir, "-cmd"}, {"generate", "-pkg", dir, "-cmd", "-check"}} {
		if code, stdout, stderr := pipegen(t, args...); code != 0 || stdout != "" || stderr != "" {
			t.Errorf("%q when up to date: exit status %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	// Without -cmd, the main is stale: it would be removed.
	code, _, stderr = pipegen(t, "generate", "-pkg", dir, "-check")
	if code != 1 || !strings.Contains(stderr, filepath.Join("cmd", "shout", "main.go")+": no longer generated") {
		t.Errorf("generate -check without -cmd: exit status %d\n%s", code, stderr)
	}

	// As go generate runs it: in the package's directory, no arguments.
	t.Chdir(dir)
	if code, stdout, stderr := pipegen(t, "generate", "-cmd", "-check"); code != 0 || stdout != "" || stderr != "" {
		t.Errorf("generate -cmd -check in the package: exit status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = pipegen(t, "generate", "-dump-ir")
	if code != 0 || !strings.Contains(stdout, `"name": "shout"`) || !strings.Contains(stdout, `"source": "lines.go"`) {
		t.Errorf("generate -dump-ir: exit status %d\n%s%s", code, stdout, stderr)
	}
	if err := os.WriteFile("lines.go", []byte(strings.Replace(annotated, "input=lines", "input=lins", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = pipegen(t, "generate")
	if code != 1 || stderr != "lines.go:11:27: unknown input \"lins\", did you mean \"lines\"?\n" || stdout != "" {
		t.Errorf("generate with a mistake: exit status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestGenerateWithoutPipelines(t *testing.T) {
	code, _, stderr := pipegen(t, "generate", "-pkg", filepath.Join("testdata", "good"))
	if code != 1 || !strings.Contains(stderr, "has no //pipegen:pipeline directive") {
		t.Errorf("exit status %d\n%s", code, stderr)
	}
	code, _, stderr = pipegen(t, "check", "-pkg", filepath.Join("testdata", "good"))
	if code != 1 || !strings.Contains(stderr, "has no //pipegen:pipeline directive") {
		t.Errorf("check: exit status %d\n%s", code, stderr)
	}
}

func TestGenerateCheckYAML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := pipegen(t, "generate", "-o", out, good); code != 0 {
		t.Fatalf("generate: %s", stderr)
	}
	if code, stdout, stderr := pipegen(t, "generate", "-check", "-o", out, good); code != 0 || stdout != "" || stderr != "" {
		t.Errorf("generate -check when up to date: exit status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if err := os.WriteFile(filepath.Join(out, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := pipegen(t, "generate", "-check", "-o", out, good)
	if code != 1 || !strings.Contains(stderr, filepath.Join(out, "main.go")+": changed") {
		t.Errorf("generate -check after an edit: exit status %d\n%s", code, stderr)
	}
}
