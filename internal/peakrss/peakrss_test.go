package peakrss

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestMain turns the test binary into the measured child when
// PEAKRSS_CHILD_MIB is set: it touches that many MiB and exits.
func TestMain(m *testing.M) {
	if mib, err := strconv.Atoi(os.Getenv("PEAKRSS_CHILD_MIB")); err == nil {
		touch(mib)
		time.Sleep(50 * time.Millisecond)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var held []byte

// touch allocates mib MiB and writes every page of it, so that it is
// resident.
func touch(mib int) {
	held = make([]byte, mib<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
}

// TestWatchIsTheChildsOwn measures a child that touches 32 MiB, started
// by a parent that holds 160: the child's peak is its own, not the
// parent's, which its rusage reports.
func TestWatchIsTheChildsOwn(t *testing.T) {
	const parentMiB, childMiB = 160, 32
	touch(parentMiB)
	defer func() { held = nil }()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PEAKRSS_CHILD_MIB="+strconv.Itoa(childMiB))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := Watch(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	got, err := peak()
	if err != nil {
		t.Fatal(err)
	}
	rusage := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("the child's peak: %d MiB by its VmHWM, %d MiB by its rusage", got>>20, rusage>>20)
	if got < childMiB<<20 || got >= (childMiB+48)<<20 {
		t.Errorf("peak %d MiB, want the child's %d MiB and its runtime's, under %d", got>>20, childMiB, childMiB+48)
	}
}

// TestWatchAfterTheEnd: a process reaped before Watch opens it is an
// error, not a peak of 0.
func TestWatchAfterTheEnd(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	if got, err := Watch(cmd.Process.Pid)(); err == nil {
		t.Errorf("Watch of a reaped process: peak %d and no error", got)
	}
}
