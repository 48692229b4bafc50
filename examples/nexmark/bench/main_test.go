package main

import (
	"os"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestTableChecksSpeedups: a speed-up over p=1 above what the machine's
// CPUs can give is named under the table, and one within it is not.
func TestTableChecksSpeedups(t *testing.T) {
	rep := &Report{CPUs: 2, Results: []Result{
		{Query: "q1", SpeedupP2: 2.07, SpeedupP4: 1.95},
		{Query: "q3", SpeedupP2: 1.77, SpeedupP4: 2.10},
		{Query: "q4", SpeedupP2: 1.58, SpeedupP4: 1.25, SpeedupPair: 2.05},
	}}
	got := table(rep)
	for _, want := range []string{"q1's p=2 / p=1 (2.07x, at most 2x)", "q3's p=4 / p=1 (2.10x, at most 2x)", "q4's 2 p=1 at once / p=1 (2.05x, at most 2x)", "are above what 2 CPUs can give"} {
		if !strings.Contains(got, want) {
			t.Errorf("the table does not say %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"q1's p=4", "q3's p=2", "q4's p="} {
		if strings.Contains(got, not) {
			t.Errorf("the table names %q, a speed-up within 2 CPUs:\n%s", not, got)
		}
	}

	rep.Results = rep.Results[2:]
	rep.Results[0].SpeedupPair = 1.66
	if got := table(rep); strings.Contains(got, "Check this run") {
		t.Errorf("the table asks for a check of speed-ups within the CPUs:\n%s", got)
	}
	rep.CPUs = 8
	rep.Results = []Result{{Query: "q5", SpeedupP2: 1.9, SpeedupP4: 4.2}}
	if got := table(rep); !strings.Contains(got, "q5's p=4 / p=1 (4.20x, at most 4x) is above what 8 CPUs can give") {
		t.Errorf("with 8 CPUs, p=4 at 4.2x is above p=4's bound of 4:\n%s", got)
	}
}

// TestSteal: the steal time is read from /proc/stat's first line, its
// share of the CPU time between two readings is what the table says, and
// a report that has none says nothing of it.
func TestSteal(t *testing.T) {
	const before = "cpu  1000 10 200 5000 40 0 30 20 0 0\ncpu0 500 5 100 2500 20 0 15 10 0 0\n"
	const after = "cpu  1600 10 300 6000 40 0 30 320 0 0\ncpu0 800 5 150 2850 20 0 15 160 0 0\n"
	a, ok := parseCPUTimes(before)
	if !ok || a.total != 6300 || a.steal != 20 {
		t.Fatalf("parseCPUTimes(before) = %+v, %v; want total 6300, steal 20", a, ok)
	}
	b, ok := parseCPUTimes(after)
	if !ok {
		t.Fatal("parseCPUTimes(after) failed")
	}
	if got := stealPercent(a, b); got != 15 { // 300 of 2000 ticks
		t.Errorf("stealPercent = %v, want 15", got)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu 1 2 3\n", "cpu 1 2 3 4 5 6 7 x 9\n"} {
		if _, ok := parseCPUTimes(bad); ok {
			t.Errorf("parseCPUTimes(%q) took it", bad)
		}
	}
	if _, ok := readCPUTimes(); !ok {
		t.Log("no /proc/stat here: reports leave the steal out")
	}

	rep := &Report{CPUs: 2, Results: []Result{{Query: "q4", SpeedupP2: 1.6}}}
	if got := table(rep); strings.Contains(got, "steal") {
		t.Errorf("a report without the steal time speaks of it:\n%s", got)
	}
	steal := 15.0
	rep.StealPercent = &steal
	if got := table(rep); !strings.Contains(got, "Host: 15.0% of this machine's CPU time") {
		t.Errorf("the table does not give the steal time:\n%s", got)
	}
}

// TestSpread: the lowest and the highest of the turns' ratios are what
// paired takes the median of, and the table shows them when the report
// has more than one turn and every query has them.
func TestSpread(t *testing.T) {
	num := []measure{{Wall: 2, CPU: 3}, {Wall: 2, CPU: 2.5}, {Wall: 1, CPU: 4}}
	den := []measure{{Wall: 1, CPU: 2}, {Wall: 1, CPU: 2}, {Wall: 1, CPU: 2}}
	if got, want := spread(num, den, cpu), [2]float64{1.25, 2}; got != want {
		t.Errorf("spread = %v, want %v", got, want)
	}
	if got := paired(num, den, cpu); got != 1.5 {
		t.Errorf("paired = %v, want 1.5, the middle of the spread's ratios", got)
	}

	sp := &Spread{RatioToHandLong: [2]float64{0.91, 0.97}, CheckpointCPU: [2]float64{0.021, 0.06}, CheckpointWall: [2]float64{-0.01, 0.03}, SpeedupP2: [2]float64{1.51, 1.84}, SpeedupPair: [2]float64{1.62, 1.71}, P2OfPair: [2]float64{0.88, 1.1}}
	rep := &Report{CPUs: 2, Reps: 3, Results: []Result{{Query: "q4", SpeedupP2: 1.77, SpeedupPair: 1.66, P2OfPair: 1.04, SpeedupP4: 1.3, Spread: sp}}}
	got := table(rep)
	for _, want := range []string{"The lowest and the highest of the 3 turns' ratios", "| q4 | 0.91 to 0.97 | +2.1% to +6.0% | -1.0% to +3.0% | 1.51x to 1.84x | 1.62x to 1.71x | 1.04 (0.88 to 1.10) |", "| 1.77x | 1.66x | 1.30x |"} {
		if !strings.Contains(got, want) {
			t.Errorf("the table does not say %q:\n%s", want, got)
		}
	}
	rep.Results[0].Spread.SpeedupPair = [2]float64{} // from a report of before the pairs
	rep.Results[0].P2OfPair = 0
	if got := table(rep); !strings.Contains(got, "| 1.51x to 1.84x | - | - |") {
		t.Errorf("a spread without the pairs' does not show a dash for it:\n%s", got)
	}
	rep.Results = append(rep.Results, Result{Query: "q5", SpeedupP2: 1.8}) // from a report of before
	if got := table(rep); strings.Contains(got, "lowest and the highest") {
		t.Errorf("the spreads are shown although q5 has none:\n%s", got)
	}
	rep.Results, rep.Reps = rep.Results[:1], 1
	if got := table(rep); strings.Contains(got, "lowest and the highest") {
		t.Errorf("the spreads of a single turn are shown:\n%s", got)
	}
}

// TestRunTwin: a run with a twin starts both processes before it waits
// for either (each here waits for the other's file, and gives up after
// 10 s), adds their CPU times, and fails when one of them fails.
func TestRunTwin(t *testing.T) {
	dir := t.TempDir()
	// $0 is the process's name; the runner appends --checkpoint-dir and
	// a folder, $1 and $2, as it does for a pipeline.
	meet := `touch ` + dir + `/$0; i=0; while [ ! -e ` + dir + `/$OTHER ]; do i=$((i+1)); [ $i -gt 100 ] && exit 1; sleep 0.1; done`
	r := &runner{tmp: t.TempDir()}
	m, err := r.run(1, "/bin/sh", []string{"-c", "OTHER=b; " + meet, "a"}, []string{"-c", "OTHER=a; " + meet, "b"})
	if err != nil {
		t.Fatalf("two processes that wait for each other: %v", err)
	}
	if m.Wall <= 0 || m.CPU < 0 {
		t.Errorf("measure = %+v", m)
	}
	if _, err := r.run(1, "/bin/sh", []string{"-c", "exit 0", "a"}, []string{"-c", "exit 3", "b"}); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a twin that fails: err = %v, want its exit status", err)
	}
	if entries, err := os.ReadDir(r.tmp); err != nil || len(entries) != 0 {
		t.Errorf("the runs' folders are left: %v, %v", entries, err)
	}
}
