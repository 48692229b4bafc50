//go:build unix

package storage

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// mapFile maps the size bytes of f into memory, read-only, or returns
// nil when it cannot: f is not a file of the operating system (an
// in-memory or wrapped one), or its size is not size (a file mapped
// past its end faults when read there).
func mapFile(f vfs.File, size int64) []byte {
	fd, ok := f.(interface{ Fd() uintptr })
	if !ok || size <= 0 || int64(int(size)) != size {
		return nil
	}
	if info, err := f.Stat(); err != nil || info.Size() != size {
		return nil
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	// Read front to back: the system reads ahead and maps more pages at
	// each fault.
	unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data
}

// releaseMapped unmaps the pages of data[from:to] (rounded to whole
// pages) from the process, which reads no more of them, and returns
// where the next release starts.
func releaseMapped(data []byte, from, to int64) int64 {
	page := int64(syscall.Getpagesize())
	to -= to % page
	if to <= from {
		return from
	}
	if unix.Madvise(data[from:to], unix.MADV_DONTNEED) != nil {
		return from
	}
	return to
}

// unmapFile undoes mapFile.
func unmapFile(data []byte) { syscall.Munmap(data) }
