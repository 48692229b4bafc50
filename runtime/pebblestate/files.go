package pebblestate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	pvfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
)

// open opens the store in folder dir. The store keeps no write-ahead log:
// it is rebuilt from the checkpoints after a crash, and a checkpoint
// flushes the memtable first.
func (f *files) open(dir string, readOnly bool) (kv.Store, error) {
	// Pebble reserves the room of its memtables in the block cache (so
	// that one size bounds both): a cache of blockCache bytes alone would
	// leave the blocks almost nothing once two memtables are counted. A
	// store of 1M keys under a small GOMEMLIMIT (blockCache 8 MiB,
	// memtables 4 MiB) read its Bloom filters from the files for every new
	// key, which took half its CPU.
	cache := pebble.NewCache(f.budget.blockCache + 2*f.budget.memTable)
	defer cache.Unref() // the store holds its own reference
	o := storeOptions(f, cache)
	o.ReadOnly = readOnly
	db, err := pebble.Open(dir, o)
	if err != nil {
		return nil, err
	}
	return kv.Wrap(db), nil
}

// storeOptions is not a method of files: a method naming Pebble's options
// would make every program that instantiates a generic type holding
// files compile Pebble's generic types (internal/kv).
func storeOptions(f *files, cache *pebble.Cache) *pebble.Options {
	o := &pebble.Options{
		FS:           f.fs,
		Cache:        cache,
		DisableWAL:   true,
		MemTableSize: uint64(f.budget.memTable),
		// One memtable is filled while the one before is flushed: the
		// budget counts two.
		MemTableStopWritesThreshold: 2,
		// The MANIFEST is copied whole at every checkpoint: Pebble starts a
		// new one, holding only the live files, once it passes this.
		MaxManifestFileSize: 128 << 10,
		Logger:              quiet{},
		// Changes come in small flushes, at least one per checkpoint, each
		// over the whole key range (keys are hashed): Pebble's own L0
		// compactions would rewrite the store every few checkpoints, and a
		// checkpoint copies what they write. The store compacts itself
		// instead (Keyed.maybeCompact) once level 0 holds half as much as
		// the levels below: over a run, a checkpoint copies what changed
		// plus a share of the occasional rewrite.
		L0CompactionThreshold:     1 << 20,
		L0CompactionFileThreshold: 1 << 20,
		L0StopWritesThreshold:     1 << 20,
		FlushSplitBytes:           1 << 40, // one table per flush
	}
	if f.comparer != nil {
		o.Comparer = f.comparer
	}
	// A key not in the store (every new key) is looked up in every level:
	// Bloom filters answer for a table without reading its blocks.
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	o.EnsureDefaults()
	return o
}

// quiet drops Pebble's informational lines; its errors are returned.
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// size is the size of the store's file path.
func (f *files) size(path string) (int64, error) {
	info, err := f.fs.Stat(path)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// put puts the store's file src at dst in the checkpoint directory: a hard
// link when both are on the local file system, else a copy, which is
// synced. With sum, it returns the file's CRC-32C.
func (f *files) put(src, dst string, sum bool) (size int64, crc uint32, err error) {
	if f.local {
		f.ckpt.Remove(dst) // left by a checkpoint that failed
		if err := os.Link(src, dst); err == nil {
			size, err = f.size(src)
			if err == nil && sum {
				crc, err = f.checksum(src)
			}
			return size, crc, err
		}
	}
	in, err := f.fs.Open(src)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	out, err := f.ckpt.Create(dst)
	if err != nil {
		return 0, 0, err
	}
	buf := make([]byte, 256<<10)
	for {
		n, rerr := in.Read(buf)
		if n > 0 {
			if sum {
				crc = storage.UpdateChecksum(crc, buf[:n])
			}
			if _, err := out.Write(buf[:n]); err != nil {
				out.Close()
				return 0, 0, err
			}
			size += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return 0, 0, rerr
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return 0, 0, err
	}
	return size, crc, out.Close()
}

func (f *files) checksum(path string) (uint32, error) {
	in, err := f.fs.Open(path)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	var crc uint32
	buf := make([]byte, 64<<10)
	for {
		n, err := in.Read(buf)
		crc = storage.UpdateChecksum(crc, buf[:n])
		if err == io.EOF {
			return crc, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// get puts the checkpoint directory's file src at dst in the store's
// file system: a hard link on the local file system for a file the store
// never writes to (an sstable, an OPTIONS file), else a copy, so that
// what the store writes never reaches a checkpoint's file.
func (f *files) get(src, dst string) error {
	base := filepath.Base(dst)
	if f.local && (strings.HasSuffix(base, ".sst") || strings.HasPrefix(base, "OPTIONS-")) {
		if err := os.Link(src, dst); err == nil {
			return nil
		}
	}
	in, err := f.ckpt.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := f.fs.Create(dst, pvfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
