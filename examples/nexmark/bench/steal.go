package main

import (
	"os"
	"strconv"
	"strings"
)

// cpuTimes is the machine's CPU time so far as Linux counts it in
// /proc/stat, in clock ticks: all of it, and steal, the time its virtual
// CPUs wanted to run while the hypervisor ran something else. Steal is
// what a virtual machine can count of its host's other tenants: time they
// take from its runs without it showing in the runs' CPU time, so that
// the wall-clock columns (events/s, the speed-ups over p=1) move with it,
// the ratios per CPU-second less. It is not all they do: shared caches
// and memory slow a run too, which shows in its CPU time and in no
// counter here.
type cpuTimes struct{ total, steal uint64 }

// readCPUTimes reads /proc/stat; false where there is none (not Linux).
func readCPUTimes() (cpuTimes, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	return parseCPUTimes(string(data))
}

// parseCPUTimes reads the first line of /proc/stat, the sum over the
// CPUs: "cpu  user nice system idle iowait irq softirq steal guest
// guest_nice" (guest time is counted in user already).
func parseCPUTimes(stat string) (cpuTimes, bool) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var t cpuTimes
	for i, s := range f[1:9] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		t.total += v
		if i == 7 {
			t.steal = v
		}
	}
	return t, true
}

// stealPercent is the share of the CPU time between a and b (a taken
// first) that was stolen, in percent.
func stealPercent(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return 100 * float64(b.steal-a.steal) / float64(b.total-a.total)
}
