package compile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPGOFlags: auto takes default.pgo beside the pipeline file when
// there is one, off and auto without one take none, a named profile is
// passed by its absolute path, and a missing one or a directory is an
// error that says how to make a profile.
func TestPGOFlags(t *testing.T) {
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "pipeline.yaml")
	for _, pgo := range []string{"", "auto", "off"} {
		if got, err := PGOFlags(pipeline, pgo); err != nil || got != nil {
			t.Errorf("PGOFlags(%q) without %s = %q, %v; want none", pgo, DefaultProfile, got, err)
		}
	}
	def := filepath.Join(dir, DefaultProfile)
	if err := os.WriteFile(def, []byte("a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pgo := range []string{"", "auto"} {
		if got, err := PGOFlags(pipeline, pgo); err != nil || !slices.Equal(got, []string{"-pgo=" + def}) {
			t.Errorf("PGOFlags(%q) beside %s = %q, %v; want -pgo=%s", pgo, DefaultProfile, got, err, def)
		}
	}
	if got, err := PGOFlags(pipeline, "off"); err != nil || got != nil {
		t.Errorf("PGOFlags(off) beside %s = %q, %v; want none", DefaultProfile, got, err)
	}
	t.Chdir(dir)
	if got, err := PGOFlags("pipeline.yaml", DefaultProfile); err != nil || !slices.Equal(got, []string{"-pgo=" + def}) {
		t.Errorf("PGOFlags of a relative path = %q, %v; want the absolute -pgo=%s", got, err, def)
	}
	for _, bad := range []string{"missing.pprof", "."} {
		if got, err := PGOFlags(pipeline, bad); err == nil || !strings.Contains(err.Error(), "--cpuprofile") {
			t.Errorf("PGOFlags(%q) = %q, %v; want an error that says how to make a profile", bad, got, err)
		}
	}
}
