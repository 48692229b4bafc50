package main

import (
	"strings"
	"testing"
)

// TestTableChecksSpeedups: a speed-up over p=1 above what the machine's
// CPUs can give is named under the table, and one within it is not.
func TestTableChecksSpeedups(t *testing.T) {
	rep := &Report{CPUs: 2, Results: []Result{
		{Query: "q1", SpeedupP2: 2.07, SpeedupP4: 1.95},
		{Query: "q3", SpeedupP2: 1.77, SpeedupP4: 2.10},
		{Query: "q4", SpeedupP2: 1.58, SpeedupP4: 1.25},
	}}
	got := table(rep)
	for _, want := range []string{"q1's p=2 / p=1 (2.07x, at most 2x)", "q3's p=4 / p=1 (2.10x, at most 2x)", "are above what the subtasks can give on 2 CPUs"} {
		if !strings.Contains(got, want) {
			t.Errorf("the table does not say %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"q1's p=4", "q3's p=2", "q4's"} {
		if strings.Contains(got, not) {
			t.Errorf("the table names %q, a speed-up within 2 CPUs:\n%s", not, got)
		}
	}

	rep.Results = rep.Results[2:]
	if got := table(rep); strings.Contains(got, "Check this run") {
		t.Errorf("the table asks for a check of speed-ups within the CPUs:\n%s", got)
	}
	rep.CPUs = 8
	rep.Results = []Result{{Query: "q5", SpeedupP2: 1.9, SpeedupP4: 4.2}}
	if got := table(rep); !strings.Contains(got, "q5's p=4 / p=1 (4.20x, at most 4x) is above what the subtasks can give on 8 CPUs") {
		t.Errorf("with 8 CPUs, p=4 at 4.2x is above p=4's bound of 4:\n%s", got)
	}
}
