package logs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestText(t *testing.T) {
	var b bytes.Buffer
	l, err := New(&b, Text, "wc")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("checkpoint 4 done in 99ms")
	l.With("node", "app", "subtask", 0).Warn("sources.app[0]: skipped 1 malformed records")
	if want := "wc: checkpoint 4 done in 99ms\nwc: sources.app[0]: skipped 1 malformed records\n"; b.String() != want {
		t.Errorf("text log\n%s\nwant\n%s", b.String(), want)
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	l, err := New(&b, JSON, "wc")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("checkpoint 4 done")
	l.Error("counts[1]: panic: boom\nrecord: {x}", "node", "counts", "subtask", 1)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (a message's line breaks are escaped):\n%s", len(lines), b.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if first["job"] != "wc" || first["msg"] != "checkpoint 4 done" || first["level"] != "INFO" || first["time"] == nil {
		t.Errorf("first line %v", first)
	}
	if second["node"] != "counts" || second["subtask"] != 1.0 || second["level"] != "ERROR" || second["job"] != "wc" {
		t.Errorf("second line %v lacks its node and subtask", second)
	}
	if _, err := New(&b, "xml", "wc"); err == nil || !strings.Contains(err.Error(), "text or json") {
		t.Errorf("format xml: %v", err)
	}
}
