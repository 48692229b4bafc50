//go:build !unix

package vfs

import (
	"io"
	"os"
)

// Lock only creates the file where the operating system has no flock: two
// instances of a job are not kept apart there.
func (osFS) Lock(name string) (io.Closer, error) {
	return os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
}
