package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// prose is what a user reads: the manual, the README, the schema's
// descriptions, and the messages the goldens pin.
func prose(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.md", "pipeline.schema.json", "../README.md", "../golden/*/want/stderr.txt"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d files, want the docs, the README and the goldens' stderr.txt", len(files))
	}
	return files
}

// TestProseArticles: "a" is not followed by a word that starts with a
// vowel sound, as in "a aggregate" or "got a alias" (messages build such
// phrases from names of kinds and nodes).
func TestProseArticles(t *testing.T) {
	// The article "a" before a word in lower case that starts with a, e,
	// i or o; "a one" and "a once" are fine. Words that start with u are
	// left alone: "a union", "a uint64", "an update". ("A is" and "func(a
	// Event" are a type and a parameter.)
	wrong := regexp.MustCompile(`(^|[\s("'\x60])a ([aei][a-z]+|o[a-np-z][a-z]*)\b`)
	for _, file := range prose(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range wrong.FindAllString(line, -1) {
				t.Errorf("%s:%d: %q: an, not a\n\t%s", file, i+1, m, line)
			}
		}
	}
}

// TestProseNoOutsidePaths: the docs name files of this repository, not of
// the machine they were written on.
func TestProseNoOutsidePaths(t *testing.T) {
	outside := regexp.MustCompile(`(^|[\s("'])/(work|tmp|root|Users|home/[a-z]+)/`)
	for _, file := range prose(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := outside.FindString(line); m != "" && !strings.Contains(line, "/home/you/") {
				t.Errorf("%s:%d: a path outside the repository:\n\t%s", file, i+1, line)
			}
		}
	}
}
