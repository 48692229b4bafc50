package dsl

import (
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
)

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"paralelism", "parallelism", 1}, // a letter missing
		{"intervall", "interval", 1},     // a letter too many
		{"nmae", "name", 2},              // two letters swapped: two edits
		{"map", "mop", 1},
		{"source", "sink", 5}, // nothing in common after the s
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	top := []string{"version", "name", "package", "parallelism", "max-parallelism", "checkpoint", "state", "sources", "operators", "sinks"}
	for _, tc := range []struct {
		word       string
		candidates []string
		want       string
	}{
		{"paralelism", top, `, did you mean "parallelism"?`},
		{"sink", top, `, did you mean "sinks"?`},
		{"operator", top, `, did you mean "operators"?`},
		{"nmae", top, ""}, // two edits in a four-letter word is too far
		{"nam", top, `, did you mean "name"?`},
		{"checkpionts", top, `, did you mean "checkpoint"?`},
		{"lnes", []string{"counts", "lines", "out"}, `, did you mean "lines"?`},
		// Far from every candidate: no suggestion.
		{"colour", top, ""},
		{"xyz", []string{"lines", "words"}, ""},
		{"timeout", []string{"tumbling", "sliding"}, ""},
		// An exact match is not a typo.
		{"name", top, ""},
		{"lines", []string{"lines", "line"}, ""},
		// Nothing to suggest from.
		{"name", nil, ""},
		// On a tie the first candidate wins, so messages are stable.
		{"cat", []string{"bat", "hat"}, `, did you mean "bat"?`},
		{"cat", []string{"hat", "bat"}, `, did you mean "hat"?`},
	} {
		if got := suggest(tc.word, tc.candidates); got != tc.want {
			t.Errorf("suggest(%q, %q) = %q, want %q", tc.word, tc.candidates, got, tc.want)
		}
	}
}
