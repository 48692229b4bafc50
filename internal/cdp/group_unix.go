//go:build unix

package cdp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the browser in a process group of its own, so that
// killGroup stops its helper processes (zygote, renderers, GPU) with it:
// killed alone, the browser left them writing into the profile folder
// for a moment, and the test's cleanup of that folder failed ("directory
// not empty", TestStatusPage under load).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the browser's process group.
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
