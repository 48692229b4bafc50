//go:build !linux

package verify

import "time"

// processCPU cannot read another process's CPU clock here: kill moments
// stay in wall time (CPUClock reports false).
func processCPU(pid int) (used time.Duration, ok bool) { return 0, false }
