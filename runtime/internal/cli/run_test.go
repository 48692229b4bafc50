package cli

import "testing"

// TestRunReturns: Run, the entry point of pipelines generated into the
// user's package, returns the exit status where Main exits.
func TestRunReturns(t *testing.T) {
	d := new(demoProgram)
	if code := Run(d.program(), []string{"run", "--quiet", "--checkpoint-dir", t.TempDir()}); code != exitOK {
		t.Errorf("Run: exit status %d, want 0", code)
	}
	if got := d.counted.Load(); got != perGen {
		t.Errorf("counts got %d records, want %d", got, perGen)
	}
	if code := Run(d.program(), []string{"frobnicate"}); code != exitUsage {
		t.Errorf("Run of an unknown command: exit status %d, want 2", code)
	}
}
