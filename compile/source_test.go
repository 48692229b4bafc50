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
// the go command's build cache and module cache where they are (they
// live in the user's cache and home unless GOCACHE and GOMODCACHE say
// otherwise), and returns it. With an empty module cache every build
// downloaded and compiled every dependency again: 30 CPU-seconds a test.
func userCache(t *testing.T) string {
	t.Helper()
	env, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gocache, modcache, _ := strings.Cut(strings.TrimSpace(string(env)), "\n")
	t.Setenv("GOCACHE", gocache)
	t.Setenv("GOMODCACHE", strings.TrimSpace(modcache))
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir) // where os.UserCacheDir looks on macOS
	return dir
}

// TestBuildKeepsSource: Build keeps the generated source in the user's
// cache, one directory per pipeline file and generated version, and the
// stack of a panic in the built program names those files, at the right
// lines.
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
	if filepath.Dir(filepath.Dir(src)) != filepath.Join(cache, "pipegen") || !strings.HasPrefix(filepath.Base(filepath.Dir(src)), "panics-") {
		t.Fatalf("Build kept the source in %q, want %s/pipegen/panics-PATH/VERSION", src, cache)
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

	// A build of another version of the pipeline keeps its files beside
	// the first's, which the first binary's stack traces still name.
	res2, err := compile.Generate(pipeline, compile.Options{Command: "pipegen build again"})
	if err != nil {
		t.Fatal(err)
	}
	if err := res2.Build(bin + "2"); err != nil {
		t.Fatal(err)
	}
	if res2.SourceDir == src || filepath.Dir(res2.SourceDir) != filepath.Dir(src) {
		t.Errorf("the second version was kept in %s, the first in %s: want another directory beside it", res2.SourceDir, src)
	}
	data, err = os.ReadFile(filepath.Join(res2.SourceDir, "main.go"))
	if err != nil || !bytes.Contains(data, []byte("pipegen build again")) {
		t.Errorf("main.go in %s is not the second build's (%v)", res2.SourceDir, err)
	}
	for _, f := range res.Files {
		data, err := os.ReadFile(filepath.Join(src, f.Name))
		if err != nil || !bytes.Equal(data, f.Content) {
			t.Errorf("%s of the first version in %s changed after the second build (%v)", f.Name, src, err)
		}
	}
}
