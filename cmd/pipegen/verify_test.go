package main

import (
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

func TestVerifyUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the first line of stderr
	}{
		{[]string{"verify"}, "pipegen verify: want one pipeline file, got 0 arguments"},
		{[]string{"verify", "-kills", "0", good}, "pipegen verify: -kills wants a whole number of at least 1, got 0"},
		{[]string{"verify", "-parallelism", "-1", good}, "pipegen verify: -parallelism wants a whole number of at least 1, got -1"},
		{[]string{"verify", "-timeout", "0", good}, "pipegen verify: -timeout wants a duration above 0, got 0s"},
		{[]string{"verify", "-set", "parallelism", good}, `pipegen verify: -set wants KEY=VALUE, got "parallelism"`},
		{[]string{"verify", "-seed", "x", good}, `pipegen verify: invalid value "x" for flag -seed`},
	} {
		code, stdout, stderr := pipegen(t, tc.args...)
		if code != 2 {
			t.Errorf("pipegen %q: exit status %d, want 2\n%s", tc.args, code, stderr)
		}
		if first, _, _ := strings.Cut(stderr, "\n"); !strings.HasPrefix(first, tc.want) {
			t.Errorf("pipegen %q: stderr starts with %q, want %q", tc.args, first, tc.want)
		}
		if !strings.Contains(stderr, "pipegen verify [-kills N]") {
			t.Errorf("pipegen %q: stderr has no usage:\n%s", tc.args, stderr)
		}
		if stdout != "" {
			t.Errorf("pipegen %q: printed %q on stdout", tc.args, stdout)
		}
	}
}

func TestVerifyWithoutFileSink(t *testing.T) {
	// testdata/good prints to standard output only: nothing to compare,
	// which is found before anything is built.
	code, stdout, stderr := pipegen(t, "verify", good)
	if code != 1 || stdout != "" {
		t.Errorf("exit status %d, stdout %q, want 1 and nothing", code, stdout)
	}
	if !strings.Contains(stderr, "pipegen verify: pipeline good has no file sink (stdout sinks are not transactional)") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
