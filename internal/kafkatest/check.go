package kafkatest

import (
	"slices"
	"testing"
	"time"

	"github.com/pipegen/pipegen/verify"
)

// Committed returns the values a read_committed consumer reads of topic,
// sorted.
func Committed(t testing.TB, brokers, topic string) []string {
	t.Helper()
	recs, err := ReadCommitted(brokers, topic, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Value))
	}
	slices.Sort(out)
	return out
}

// Compare fails t, showing the first differences, unless got holds the
// lines of want, each as often (both sorted).
func Compare(t testing.TB, what string, want, got []string) {
	t.Helper()
	d := verify.CompareLines(want, got, 5)
	if d.Equal() {
		return
	}
	t.Errorf("%s: %d lines missing, %d extra (of %d expected)", what, d.Missing, d.Extra, len(want))
	for _, l := range d.FirstMissing {
		t.Errorf("  missing: %s", l)
	}
	for _, l := range d.FirstExtra {
		t.Errorf("  extra:   %s", l)
	}
}
