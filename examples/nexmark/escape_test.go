package nexmark_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/examples/nexmark"
)

// TestRecordsStayOnStack compiles every query's generated program with the
// compiler's escape analysis printed (-gcflags=-m) and fails when it moves
// a record of the generated code to the heap: an allocation per record.
// Records cross the generated methods by reference (a sender passes its
// record's address to the direct method of the chain that runs in its
// goroutine), which is only free while nothing the receiver calls keeps
// that address.
func TestRecordsStayOnStack(t *testing.T) {
	if testing.Short() {
		t.Skip("compiling every query is skipped in -short mode")
	}
	moved := regexp.MustCompile(`pipeline\.go:\d+:\d+: moved to heap: (r|rec|recs)$`)
	for _, q := range nexmark.Queries {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			out := build(t, filepath.Join("queries", q+".yaml")).out
			if !strings.Contains(out, "pipeline.go:") {
				t.Fatalf("go build -gcflags=-m printed nothing of the generated program of %s: the test would prove nothing", q)
			}
			for _, line := range strings.Split(out, "\n") {
				if moved.MatchString(line) {
					t.Errorf("%s: the generated code moves a record to the heap, an allocation per record: %s", q, line)
				}
			}
		})
	}
}
