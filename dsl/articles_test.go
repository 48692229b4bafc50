package dsl

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesArticles: a message that names an operator's kind puts the
// right article before it.
func TestMessagesArticles(t *testing.T) {
	_, diags := resolveFile(t, filepath.Join("testdata", "articles", "pipeline.yaml"))
	var all []string
	for _, d := range diags.Items() {
		all = append(all, d.Msg)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"has 2 inputs but an aggregate takes one", "on-timer is for process; an aggregate has no timers"} {
		if !strings.Contains(text, want) {
			t.Errorf("no message says %q:\n%s", want, text)
		}
	}
}
