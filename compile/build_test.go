package compile

import (
	"bytes"
	"slices"
	"testing"
)

// TestStepWriter: of what the go command prints with -v, the packages it
// compiles and the modules it downloads are steps, the program's own
// package is marked, and everything else (the compiler's errors, their
// package's header) is kept as printed, a last line without its newline
// too, whatever the writes' boundaries.
func TestStepWriter(t *testing.T) {
	printed := "go: downloading github.com/cockroachdb/pebble/v2 v2.1.0\n" +
		"internal/goarch\n" +
		"github.com/pipegen/pipegen/runtime/internal/stream\n" +
		"# github.com/you/job/pipegen_build/job\n" +
		"/home/you/.cache/pipegen/job-1/2/pipeline.go:12:3: undefined: x\n" +
		"gopkg.in/yaml.v3\n" +
		"github.com/you/job/pipegen_build/job\n" +
		"note: module requires Go 1.26"
	for _, size := range []int{1, 7, len(printed)} {
		var rest bytes.Buffer
		var steps []BuildStep
		w := &stepWriter{rest: &rest, step: func(s BuildStep) { steps = append(steps, s) }, program: "/pipegen_build/job"}
		for p := []byte(printed); len(p) > 0; {
			n := min(size, len(p))
			if m, err := w.Write(p[:n]); m != n || err != nil {
				t.Fatalf("Write: %d, %v", m, err)
			}
			p = p[n:]
		}
		rest.Write(w.partial)
		want := []BuildStep{
			{Download: true, Path: "github.com/cockroachdb/pebble/v2 v2.1.0"},
			{Path: "internal/goarch"},
			{Path: "github.com/pipegen/pipegen/runtime/internal/stream"},
			{Path: "gopkg.in/yaml.v3"},
			{Path: "github.com/you/job/pipegen_build/job", Program: true},
		}
		if !slices.Equal(steps, want) {
			t.Errorf("writes of %d bytes: steps\n%v\nwant\n%v", size, steps, want)
		}
		wantRest := "# github.com/you/job/pipegen_build/job\n/home/you/.cache/pipegen/job-1/2/pipeline.go:12:3: undefined: x\nnote: module requires Go 1.26"
		if rest.String() != wantRest {
			t.Errorf("writes of %d bytes: the rest %q, want %q", size, rest.String(), wantRest)
		}
	}
}
