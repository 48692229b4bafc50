// Package runtime is the small library every program that pipegen generates
// links against: the command line (`run`, `--set`), the job's goroutines
// and the channels between them, key groups, and the built-in connectors.
//
// The per-record work is generated; this package holds what is the same for
// every pipeline. Generated code wires it together like this:
//
//   - each chain of fused operators is one goroutine per subtask, started
//     with Job.Go;
//   - records cross goroutines through an Out (the sender's side, batching
//     records per receiver and routing them by key group) and an Inbox (the
//     receiver's side, one channel per subtask shared by all its senders);
//   - control events (checkpoint barriers, watermarks, end of input) travel
//     in band on the same channels, so that they stay ordered with the
//     records around them.
package runtime
