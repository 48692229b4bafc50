// Package e2ekafka holds two pipelines for the Kafka connector's crash
// tests: Kafka -> file (tofile.yaml) and file -> Kafka (fromfile.yaml).
package e2ekafka

import (
	"strings"

	"github.com/pipegen/pipegen"
)

// Tag marks a line as having passed through the job.
func Tag(s string) string { return "seen " + strings.ToUpper(s) }

// Word is the first word of a line: windows.yaml counts lines by it.
func Word(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// Count counts lines.
type Count struct{ N int64 }

// AddLine counts one more line.
func AddLine(c *Count, _ string) { c.N++ }

// WindowCount is one key's count in one window.
type WindowCount struct {
	Word  string `json:"word"`
	Start int64  `json:"start"`
	N     int64  `json:"n"`
}

// Counted is a key's count in a window.
func Counted(word string, w pipegen.Window, c *Count) WindowCount {
	return WindowCount{Word: word, Start: w.Start.UnixMilli(), N: c.N}
}
