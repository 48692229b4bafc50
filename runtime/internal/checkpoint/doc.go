// Package checkpoint runs the Asynchronous Barrier Snapshot protocol for
// one run of a job: the coordinator injects barrier n into every source
// (SourceCtl), each chain subtask snapshots its state when the barrier has
// aligned and submits it (Task, Snapshot), writers encode and write the
// snapshots while processing goes on, and once every subtask has
// acknowledged, the manifest commits the checkpoint and the sinks' output
// becomes visible. Recover chooses the checkpoint a run resumes from, and
// the restore functions hand each subtask its part of it.
package checkpoint
