//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// Lock takes an flock(2) lock, which the kernel drops when the process
// ends. The file holds the holder's pid, for the message of the next one.
func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder, _ := io.ReadAll(io.LimitReader(f, 100))
			return nil, &LockedError{Path: name, Holder: strings.TrimSpace(string(holder))}
		}
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	// Who holds it is information only: not synced, and a holder killed
	// while writing it leaves at worst a garbled pid.
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %d\n", os.Getpid())
	}
	return f, nil
}
