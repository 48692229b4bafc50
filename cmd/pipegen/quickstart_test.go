package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestQuickStart runs the README's steps from go mod init to a running
// program, as written there, in a new module in a temporary folder, and
// compares their output with the README's. pipegen is not published: in
// place of `go get -tool`, the test runs the go mod edit line the README
// gives for a checkout, with this repository as /path/to/pipegen.
func TestQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pipegen and a program in a new module")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	pipeline := block(t, readme, "```yaml\n")
	code := block(t, readme, "```go\npackage wordcount\n")
	steps := block(t, readme, "```\n$ go mod init ")
	checkout := strings.TrimPrefix(block(t, readme, "```\n$ go mod edit -require="), "$ ")

	dir := t.TempDir()
	for name, content := range map[string]string{"pipeline.yaml": pipeline, "wordcount.go": code} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh shell: no GOFLAGS, no workspace; the user's cache in a
	// temporary folder but for the go command's build cache, kept warm.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	env := append(os.Environ(), "GOFLAGS=", "GOWORK=off", "XDG_CACHE_HOME="+cache, "GOCACHE="+strings.TrimSpace(string(gocache)))

	var cmd string
	var want []string
	check := func() {
		t.Helper()
		if cmd == "" {
			return
		}
		if strings.HasPrefix(cmd, "go get -tool ") {
			cmd = strings.ReplaceAll(checkout, "/path/to/pipegen", root)
		}
		c := exec.Command("sh", "-c", cmd)
		c.Dir, c.Env = dir, env
		var stderr strings.Builder
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			t.Fatalf("$ %s: %v\n%s%s", cmd, err, out, stderr.String())
		}
		if len(want) == 0 {
			return
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		ok := len(got) == len(want)
		for i := 0; ok && i < len(got); i++ {
			// The README's /home/you/.cache is the user's cache, and …
			// stands for what differs from one machine to the next.
			w := strings.ReplaceAll(regexp.QuoteMeta(want[i]), regexp.QuoteMeta("/home/you/.cache"), regexp.QuoteMeta(cache))
			ok = regexp.MustCompile("^" + strings.ReplaceAll(w, "…", "[^ )]+") + "$").MatchString(got[i])
		}
		if !ok {
			t.Errorf("$ %s prints\n%s\nthe README says\n%s", cmd, out, strings.Join(want, "\n"))
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(steps, "\n"), "\n") {
		if next, ok := strings.CutPrefix(line, "$ "); ok {
			check()
			cmd, want = next, nil
		} else {
			want = append(want, line)
		}
	}
	check()
	if !strings.Contains(steps, "$ go get -tool ") {
		t.Errorf("the README's steps have no go get -tool:\n%s", steps)
	}
	if _, err := os.Stat(filepath.Join(dir, "wordcount")); err != nil {
		t.Errorf("the steps built no ./wordcount: %v", err)
	}
}

// block returns the content of the README's first fenced block that
// starts with start (its fence line, and maybe more).
func block(t *testing.T, readme, start string) string {
	t.Helper()
	i := strings.Index(readme, start)
	if i < 0 {
		t.Fatalf("the README has no block starting with %q", start)
	}
	content := readme[i+strings.Index(readme[i:], "\n")+1:]
	end := strings.Index(content, "```\n")
	if end < 0 {
		t.Fatalf("the README's block starting with %q does not end", start)
	}
	return content[:end]
}
