package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/compile"
)

// TestCommandHelp: `pipegen COMMAND --help` (and -h, and pipegen help
// COMMAND) prints that command's usage and every flag it takes, on
// standard output, and exits 0; the usage that pipegen help prints names
// every flag of every command.
func TestCommandHelp(t *testing.T) {
	code, usage, stderr := pipegen(t, "help")
	if code != 0 || stderr != "" {
		t.Fatalf("pipegen help: exit status %d, stderr %q", code, stderr)
	}
	flagLine := regexp.MustCompile(`(?m)^  (-[a-z-]+)`)
	for _, tc := range []struct {
		command string
		flags   []string
	}{
		{"check", []string{"-allow-non-restored-state", "-pkg", "-savepoint"}},
		{"generate", []string{"-o", "-pkg", "-cmd", "-check", "-dump-ir", "-test"}},
		{"build", []string{"-o", "-pgo"}},
		{"verify", []string{"-kills", "-seed", "-parallelism", "-o", "-keep-interval", "-set", "-timeout"}},
		{"schema", nil},
		{"version", nil},
	} {
		for _, args := range [][]string{{tc.command, "--help"}, {tc.command, "-h"}, {"help", tc.command}} {
			code, stdout, stderr := pipegen(t, args...)
			if code != 0 || stderr != "" {
				t.Errorf("pipegen %s: exit status %d, stderr %q; want 0 and nothing", strings.Join(args, " "), code, stderr)
				continue
			}
			if want := "usage:\n  pipegen " + tc.command; !strings.HasPrefix(stdout, want) {
				t.Errorf("pipegen %s prints\n%s\nwant it to start with %q", strings.Join(args, " "), stdout, want)
			}
			var got []string
			for _, m := range flagLine.FindAllStringSubmatch(stdout, -1) {
				got = append(got, m[1])
			}
			want := slices.Sorted(slices.Values(tc.flags))
			if !slices.Equal(got, want) {
				t.Errorf("pipegen %s lists the flags %q, want %q", strings.Join(args, " "), got, want)
			}
		}
		// Every flag is in one of the command's lines of the usage.
		var lines []string // and the lines that continue them
		in := false
		for _, l := range strings.Split(usage, "\n") {
			if strings.HasPrefix(l, "  pipegen ") {
				in = strings.HasPrefix(l+" ", "  pipegen "+tc.command+" ")
			}
			if in {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			t.Errorf("pipegen help has no line for %s:\n%s", tc.command, usage)
		}
		for _, f := range tc.flags {
			// optional ([-o DIR]), or what a form of its own starts with
			// (generate -test ...)
			if all := strings.Join(lines, "\n"); !strings.Contains(all, "["+f) && !strings.Contains(all, tc.command+" "+f+" ") {
				t.Errorf("pipegen help's lines for %s do not name %s:\n%s", tc.command, f, strings.Join(lines, "\n"))
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		code, stdout, stderr := pipegen(t, arg)
		if want := "pipegen " + compile.Version() + "\n"; code != 0 || stdout != want || stderr != "" {
			t.Errorf("pipegen %s: exit status %d, stdout %q, stderr %q; want 0 and %q", arg, code, stdout, stderr, want)
		}
	}
	if code, _, stderr := pipegen(t, "version", "x"); code != 2 || !strings.HasPrefix(stderr, "pipegen version: takes no arguments") {
		t.Errorf("pipegen version x: exit status %d, stderr %q", code, stderr)
	}
}
