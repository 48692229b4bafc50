// Package vfs is the filesystem interface of checkpoint storage and
// transactional sinks: every byte they persist goes through an FS, so that
// tests can run them on an in-memory filesystem, inject faults, simulate a
// power loss, and pin the order of file operations in a golden file.
//
// Implementations:
//
//   - Default is the operating system's filesystem (package os); its errors
//     are os errors, so errors.Is(err, fs.ErrNotExist) and friends work.
//   - NewMem returns a MemFS: a directory tree in memory with the semantics
//     of a POSIX filesystem, plus a model of durability (see MemFS and
//     MemFS.CrashClone).
//   - NewErrorFS wraps an FS and fails the operations an Injector chooses.
//   - NewRecordingFS wraps an FS and logs every mutating operation, one per
//     line, for golden tests of the order of writes, syncs and renames.
//
// The helpers WriteFileSync, AtomicWriteFile, SyncDir and ReadFile work on
// any FS. AtomicWriteFile is the commit-point write: temporary file, fsync,
// rename, fsync of the parent directory.
package vfs
