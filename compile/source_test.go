package compile_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
)

// userCache points the user's cache at a temporary directory, keeping
// the go command's build cache where it is (it lives in the user's cache
// unless GOCACHE says otherwise), and returns it.
func userCache(t *testing.T) string {
	t.Helper()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir) // where os.UserCacheDir looks on macOS
	return dir
}

// TestBuildKeepsSource: Build keeps the generated source in the user's
// cache, one directory per pipeline file, and the stack of a panic in the
// built program names those files, at the right lines.
func TestBuildKeepsSource(t *testing.T) {
	if testing.Short() {
		t.Skip("go build is skipped in -short mode")
	}
	cache := userCache(t)
	pipeline := filepath.Join("testdata", "panics", "pipeline.yaml")
	res, err := compile.Generate(pipeline, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "panics")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	src := res.SourceDir
	if filepath.Dir(src) != filepath.Join(cache, "pipegen") || !strings.HasPrefix(filepath.Base(src), "panics-") {
		t.Fatalf("Build kept the source in %q, want %s/pipegen/panics-HASH", src, cache)
	}
	for _, f := range res.Files {
		data, err := os.ReadFile(filepath.Join(src, f.Name))
		if err != nil || !bytes.Equal(data, f.Content) {
			t.Errorf("%s in %s is not the generated file (%v)", f.Name, src, err)
		}
	}

	cmd := exec.Command(bin, "run", "--quiet")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "panic: three") {
		t.Fatalf("panics run: %v, want it to fail with panic: three\n%s", err, out)
	}
	// Every frame names a file that exists; the caller of Square is in
	// the generated pipeline.go in the cache, at a line that calls it.
	frames := regexp.MustCompile(`(?m)^(\S+)\(.*\)\n\t(\S+\.go):(\d+)`).FindAllStringSubmatch(string(out), -1)
	for _, m := range frames {
		if _, err := os.Stat(m[2]); err != nil {
			t.Errorf("the stack names %s:%s: %v", m[2], m[3], err)
		}
	}
	caller := -1
	for i, m := range frames {
		if strings.HasSuffix(m[1], "panics.Square") && i+1 < len(frames) {
			caller = i + 1
			break
		}
	}
	if caller < 0 {
		t.Fatalf("no frame calls Square:\n%s", out)
	}
	file, line := frames[caller][2], frames[caller][3]
	if file != filepath.Join(src, "pipeline.go") {
		t.Errorf("Square's caller is in %s, want %s", file, filepath.Join(src, "pipeline.go"))
	}
	data, err := os.ReadFile(file)
	n, _ := strconv.Atoi(line)
	if lines := strings.Split(string(data), "\n"); err != nil || n < 1 || n > len(lines) || !strings.Contains(lines[n-1], "Square(") {
		t.Errorf("%s:%d does not call Square (%v)", file, n, err)
	}

	// The next build of the same pipeline replaces the files; a
	// leftover of another version goes.
	stray := filepath.Join(src, "old.go")
	if err := os.WriteFile(stray, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res2, err := compile.Generate(pipeline, compile.Options{Command: "pipegen build again"})
	if err != nil {
		t.Fatal(err)
	}
	if err := res2.Build(bin); err != nil {
		t.Fatal(err)
	}
	if res2.SourceDir != src {
		t.Errorf("the second build kept the source in %s, the first in %s", res2.SourceDir, src)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", stray, err)
	}
	data, err = os.ReadFile(filepath.Join(src, "main.go"))
	if err != nil || !bytes.Contains(data, []byte("pipegen build again")) {
		t.Errorf("main.go in %s is not the second build's (%v)", src, err)
	}
}
