//go:build !unix

package storage

import "github.com/pipegen/pipegen/runtime/vfs"

// mapFile maps nothing here: the files are read.
func mapFile(vfs.File, int64) []byte { return nil }

func releaseMapped(_ []byte, from, _ int64) int64 { return from }

func unmapFile([]byte) {}
