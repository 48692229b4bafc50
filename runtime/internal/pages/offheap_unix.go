//go:build unix

package pages

import "syscall"

// mapAnon maps n bytes of anonymous memory, nil when it cannot.
func mapAnon(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return b
}

// unmapAnon unmaps what mapAnon mapped.
func unmapAnon(b []byte) bool { return syscall.Munmap(b) == nil }
