package cli

import (
	"strings"
	"testing"
)

// TestSavepointCommandErrors: the savepoint and stop commands say what is
// wrong when no job runs with the directory, --drain is refused (not
// implemented), and a folder that is not a savepoint does not inspect.
func TestSavepointCommandErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"savepoint", "--checkpoint-dir", dir}, exitFail, "no job runs with checkpoint directory " + dir},
		{[]string{"stop", "--savepoint", "--checkpoint-dir", dir}, exitFail, "no job runs with checkpoint directory"},
		{[]string{"stop", "--checkpoint-dir", dir}, exitFail, "no job runs with checkpoint directory"},
		{[]string{"stop", "--drain", "--checkpoint-dir", dir}, exitFail, "no job runs with checkpoint directory"},
		{[]string{"stop", "--savepoint-dir", dir}, exitUsage, "--savepoint-dir needs --savepoint"},
		{[]string{"savepoint", "stray"}, exitUsage, "usage: demo savepoint"},
		{[]string{"savepoint", "inspect", dir}, exitFail, "MANIFEST"},
		{[]string{"run", "--fresh", "--from-savepoint", dir}, exitUsage, "give one of them"},
		{[]string{"run", "--from-checkpoint", dir, "--from-savepoint", dir}, exitUsage, "not both"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runDemo(t, new(demoProgram), tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
}
