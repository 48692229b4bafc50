// Package goldenfile compares test output with files checked into the
// repository, and rewrites them when tests run with -update:
//
//	go test ./... -update
//
// Every test package of the module imports it (blank, where it compares
// nothing itself), so that the flag is defined in all of them.
package goldenfile

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update is the -update flag: rewrite golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite golden files from the current output")

// Check compares got with the file at path, or writes got there with
// -update. A difference fails the test with a (-want +got) line diff.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: missing; run go test with -update to write it. The output is:\n%s", path, got)
		return
	}
	if d := Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, run go test with -update and review the diff:\n%s", path, d)
	}
}

// Diff returns a line diff of want and got, "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	// Longest common subsequence: golden files are small.
	lcs := make([][]int, len(w)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(g)+1)
	}
	for i := len(w) - 1; i >= 0; i-- {
		for j := len(g) - 1; j >= 0; j-- {
			if w[i] == g[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(w) || j < len(g) {
		switch {
		case i < len(w) && j < len(g) && w[i] == g[j]:
			i++
			j++
		case j < len(g) && (i == len(w) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&b, "+%d: %s\n", j+1, g[j])
			j++
		default:
			fmt.Fprintf(&b, "-%d: %s\n", i+1, w[i])
			i++
		}
	}
	return b.String()
}
