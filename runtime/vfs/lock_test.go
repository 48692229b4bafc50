package vfs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// holdVar makes the test binary a process that holds a lock until killed.
const holdVar = "PIPEGEN_VFS_HOLD_LOCK"

func init() {
	if path := os.Getenv(holdVar); path != "" {
		if _, err := Default.Lock(path); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Hour)
	}
}

func TestLock(t *testing.T) {
	for name, fsys := range map[string]FS{"os": Default, "mem": NewMem()} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "LOCK")
			l, err := fsys.Lock(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = fsys.Lock(path)
			var le *LockedError
			if !errors.As(err, &le) || le.Path != path {
				t.Fatalf("second Lock = %v, want a *LockedError of %s", err, path)
			}
			if name == "os" && le.Holder != fmt.Sprintf("pid %d", os.Getpid()) {
				t.Errorf("holder %q, want this process's pid %d", le.Holder, os.Getpid())
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l, err = fsys.Lock(path)
			if err != nil {
				t.Fatalf("Lock after Close = %v", err)
			}
			l.Close()
		})
	}
}

// TestLockOfKilledProcess: a lock whose holder was killed is free at once.
func TestLockOfKilledProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	path := filepath.Join(t.TempDir(), "LOCK")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdVar+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		cmd.Process.Kill()
		t.Fatalf("holder says %q", line)
	}
	_, err = Default.Lock(path)
	var le *LockedError
	if !errors.As(err, &le) || le.Holder != fmt.Sprintf("pid %d", cmd.Process.Pid) {
		t.Errorf("Lock while another process holds it = %v, want a *LockedError naming pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Default.Lock(path)
	if err != nil {
		t.Fatalf("Lock after the holder was killed = %v", err)
	}
	l.Close()
}
