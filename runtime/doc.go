// Package runtime is what every program that pipegen generates links
// against: a facade of aliases and thin wrappers over the packages under
// runtime/internal, each of which owns one concern (docs/runtime.md lists
// them). Generated code imports this package, runtime/codec and
// runtime/state, and nothing else of the runtime.
//
// The per-record work is generated; the runtime holds what is the same for
// every pipeline. Generated code wires it together like this:
//
//   - each chain of fused operators is one goroutine per subtask, started
//     with Job.Go;
//   - records cross goroutines through an Out (the sender's side, batching
//     records per receiver and routing them by key group) and an Inbox (the
//     receiver's side, one channel per subtask shared by all its senders);
//   - control events (checkpoint barriers, watermarks, end of input) travel
//     in band on the same channels, so that they stay ordered with the
//     records around them;
//   - each chain subtask has a Task, its part in checkpoints: it snapshots
//     its state at an aligned barrier and submits the snapshot, which the
//     checkpoint writers write while the subtask goes on.
package runtime
