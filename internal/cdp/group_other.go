//go:build !unix

package cdp

import "os/exec"

func ownGroup(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
