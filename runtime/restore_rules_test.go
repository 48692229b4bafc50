package runtime

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// The rules every restore follows (the automatic resume, --from-checkpoint
// and --from-savepoint alike): state is matched to nodes by uid, the
// number of key groups is fixed, schemas are compared, and state of a node
// this version does not have is refused unless it is left behind on
// purpose.

// TestRestoreMatchesByUID renames the keyed node but keeps its uid: the
// new version resumes with its state, to an exact output.
func TestRestoreMatchesByUID(t *testing.T) {
	o, base, newest := stoppedRun(t)
	next := *o
	next.fs = base.CrashClone()
	next.configure = func(c *config.Config) { c.Nodes[sumSum].Name = "total"; c.Nodes[sumOut].FusedWith = "total" }
	r := next.mustRun(t)
	if r.restoredID() != newest {
		t.Fatalf("resumed from checkpoint %d, want %d", r.restoredID(), newest)
	}
	next.checkOutput(t, next.fs)
}

// TestRestoreVanishedState gives the keyed node another uid: the state of
// uid "sum" has no node in the new version. The restore is refused, and
// the message says how to go on; with --allow-non-restored-state it
// resumes, the state left behind (the counts start over).
func TestRestoreVanishedState(t *testing.T) {
	o, base, newest := stoppedRun(t)
	next := *o
	next.fs = base.CrashClone()
	next.configure = func(c *config.Config) { c.Nodes[sumSum].UID = "sum2" }
	r := next.run(t)
	var fatal *fault.Fatal
	want := `checkpoint ` + itoa(newest) + ` holds the state of aggregate "sum" (uid sum), which this version of the job does not have: it would be lost (run --allow-non-restored-state`
	if !errors.As(r.err, &fatal) || !strings.Contains(r.err.Error(), want) {
		t.Fatalf("Run = %v, want a fatal error with %q", r.err, want)
	}
	next.allowNonRestored = true
	r = next.run(t)
	if r.err != nil {
		t.Fatalf("Run with --allow-non-restored-state: %v\n%s", r.err, r.log)
	}
	if r.restoredID() != newest || !strings.Contains(r.log.String(), "it is left behind (--allow-non-restored-state)") {
		t.Errorf("resumed from %d, want %d, with a warning:\n%s", r.restoredID(), newest, r.log)
	}
}

// TestRestoreMaxParallelismFixed: another max-parallelism is refused with
// a message that says why.
func TestRestoreMaxParallelismFixed(t *testing.T) {
	o, base, _ := stoppedRun(t)
	next := *o
	next.fs = base.CrashClone()
	next.configure = func(c *config.Config) { c.MaxParallelism = 64 }
	r := next.run(t)
	var fatal *fault.Fatal
	want := "it has 128 key groups (max-parallelism) and this run 64: max-parallelism is fixed for the life of the state"
	if !errors.As(r.err, &fatal) || !strings.Contains(r.err.Error(), want) {
		t.Fatalf("Run = %v, want a fatal error with %q", r.err, want)
	}
}

// TestRestoreSchemaRemovedField: a field removed from the end of a state
// type resumes (its values are dropped); the schemas are compared even
// when the fingerprint did not change.
func TestRestoreSchemaRemovedField(t *testing.T) {
	o, base, newest := stoppedRunConfigured(t, func(c *config.Config) {
		c.Fingerprint, c.Nodes[sumSum].KeySchema, c.Nodes[sumSum].ValueSchema = "v1", "int64", "example.com/sum.Acc{1 Count int64; 2 Last string}"
	})
	next := *o
	next.fs = base.CrashClone()
	next.configure = func(c *config.Config) {
		c.Fingerprint, c.Nodes[sumSum].KeySchema, c.Nodes[sumSum].ValueSchema = "v2", "int64", "example.com/sum.Acc{1 Count int64}"
	}
	if r := next.mustRun(t); r.restoredID() != newest {
		t.Fatalf("resumed from %d, want %d", r.restoredID(), newest)
	}
	// Same fingerprint, other schema: still compared, and refused.
	again := *o
	again.fs = base.CrashClone()
	again.configure = func(c *config.Config) {
		c.Fingerprint, c.Nodes[sumSum].KeySchema, c.Nodes[sumSum].ValueSchema = "v1", "int64", "example.com/sum.Acc{1 Count uint64; 2 Last string}"
	}
	r := again.run(t)
	if want := "sum.Acc.Count was int64 in the checkpoint and is uint64 now"; r.err == nil || !strings.Contains(r.err.Error(), want) {
		t.Fatalf("Run = %v, want %q", r.err, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
