// Package peakrss measures the peak resident memory of a child process,
// for the benchmarks that report it.
//
// A child's rusage is no use for this: Go starts a program with a clone
// that shares the parent's memory until the exec, and the kernel carries
// the larger of that memory's high-water mark and the program's own into
// the maximum resident size that wait reports. A child's figure is then
// at least the parent's peak, which in a benchmark that holds a Kafka
// cluster or earlier runs' data is larger than the child's. The high-water
// mark of the program's own memory (VmHWM in /proc/<pid>/status) starts
// at the exec, so Watch samples that.
package peakrss

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// Interval is how often Watch samples: the mark only grows, so what a
// program adds in the last Interval of its life is all it can miss.
const Interval = 5 * time.Millisecond

// Watch samples the peak resident memory of the running process pid (a
// child just started) until it ends. The returned function waits for the
// end of the sampling, which comes soon after the process has been
// reaped, and returns the peak in bytes; an error if the process could
// not be read at all (no /proc).
func Watch(pid int) (peak func() (int64, error)) {
	type result struct {
		peak int64
		err  error
	}
	done := make(chan result, 1)
	// The folder is opened once: files opened through it after the
	// process is reaped fail, so a later process with the same pid is
	// never read.
	proc, err := os.OpenRoot(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		done <- result{err: fmt.Errorf("peak memory of process %d: %w", pid, err)}
	} else {
		go func() {
			defer proc.Close()
			var r result
			for {
				kb, ok := highWater(proc)
				if !ok {
					break
				}
				r.peak = max(r.peak, kb<<10)
				time.Sleep(Interval)
			}
			if r.peak == 0 {
				r.err = fmt.Errorf("peak memory of process %d: no VmHWM read in /proc/%d/status", pid, pid)
			}
			done <- r
		}()
	}
	return func() (int64, error) {
		r := <-done
		return r.peak, r.err
	}
}

// highWater reads VmHWM, in KiB, from the status file of the process
// whose /proc folder is proc; false once the process has exited (a
// zombie's status has no VmHWM) or been reaped.
func highWater(proc *os.Root) (int64, bool) {
	f, err := proc.Open("status")
	if err != nil {
		return 0, false
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			fields := bytes.Fields(v)
			if len(fields) == 2 {
				kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
				return kb, err == nil
			}
		}
	}
	return 0, false
}
