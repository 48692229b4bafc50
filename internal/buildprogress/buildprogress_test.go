package buildprogress

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	_ "github.com/pipegen/pipegen/internal/goldenfile"
	"github.com/pipegen/pipegen/internal/syncbuf"
)

// TestProgressQuietWhenQuick: a build that ends before the progress is
// due prints nothing, as a build with a warm cache does.
func TestProgressQuietWhenQuick(t *testing.T) {
	var out syncbuf.Buffer
	p := start(&out, "p.yaml", false, time.Hour, time.Hour)
	p.Step(compile.BuildStep{Path: "github.com/you/job/pipegen_build/job", Program: true})
	p.End(nil)
	if out.String() != "" {
		t.Errorf("a quick build printed %q", out.String())
	}
}

// TestProgressQuietForTheProgram: a build that compiles only the
// program's own package says nothing, however long it takes.
func TestProgressQuietForTheProgram(t *testing.T) {
	var out syncbuf.Buffer
	p := start(&out, "p.yaml", false, time.Millisecond, time.Millisecond)
	p.Building()
	p.Step(compile.BuildStep{Path: "github.com/you/job/pipegen_build/job", Program: true})
	time.Sleep(50 * time.Millisecond)
	p.End(nil)
	if out.String() != "" {
		t.Errorf("a build of the program's package alone printed %q", out.String())
	}
}

// TestProgressLines: outside a terminal, a long build writes a line a
// period, each saying what was compiled and downloaded so far and what
// the go command does now, then what it compiled in all.
func TestProgressLines(t *testing.T) {
	var out syncbuf.Buffer
	p := start(&out, "p.yaml", false, time.Millisecond, 5*time.Millisecond)
	waitFor(t, &out, "loading the pipeline's Go packages\n")
	p.Building()
	p.Step(compile.BuildStep{Download: true, Path: "github.com/cockroachdb/pebble/v2 v2.1.0"})
	p.Step(compile.BuildStep{Path: "fmt"})
	p.Step(compile.BuildStep{Path: "github.com/pipegen/pipegen/runtime"})
	waitFor(t, &out, "1 module downloaded, 2 packages compiled, compiling github.com/pipegen/pipegen/runtime\n")
	p.Step(compile.BuildStep{Path: "github.com/you/job/pipegen_build/job", Program: true})
	waitFor(t, &out, ", 3 packages compiled, compiling and linking the program\n")
	p.End(nil)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if !regexp.MustCompile(`^building p\.yaml: \d+s, loading the pipeline's Go packages$`).MatchString(lines[0]) {
		t.Errorf("first line %q", lines[0])
	}
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^building p\.yaml: 3 packages compiled in [0-9.]+m?s; the go command keeps them in its cache for the next build$`).MatchString(last) {
		t.Errorf("last line %q, want what was compiled in all", last)
	}
	if strings.Contains(out.String(), "\r") {
		t.Errorf("outside a terminal, a line is redrawn in place:\n%q", out.String())
	}
}

// TestProgressTerminal: on a terminal the line is redrawn in place, cut
// to its width, and erased at the end; a failed build leaves no summary
// (its error follows).
func TestProgressTerminal(t *testing.T) {
	var out syncbuf.Buffer
	p := start(&out, "p.yaml", true, time.Millisecond, time.Millisecond)
	p.Step(compile.BuildStep{Path: "github.com/pipegen/pipegen/" + strings.Repeat("x", 200)})
	waitFor(t, &out, "...")
	p.End(errors.New("go build failed"))
	got := out.String()
	if !strings.HasPrefix(got, "\r\033[Kbuilding p.yaml: ") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("terminal output %q, want lines drawn in place and erased", got)
	}
	for _, l := range strings.Split(got, "\r\033[K") {
		if len(l) > progressWidth {
			t.Errorf("a line of %d bytes, over %d: %q", len(l), progressWidth, l)
		}
	}
	if strings.Contains(got, "\n") {
		t.Errorf("a failed build's progress wrote a line that stays: %q", got)
	}
}

// waitFor waits until out holds want.
func waitFor(t *testing.T, out *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the progress:\n%s", want, out.String())
		}
		time.Sleep(time.Millisecond)
	}
}
