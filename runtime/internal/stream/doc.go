// Package stream is the data plane of a job: how records and control
// events travel between subtasks.
//
// An Out is the sending side of one subtask towards one downstream node: a
// batch per receiving subtask, routed forward, by key group, round robin or
// to all. An Inbox is the receiving side: one channel per subtask shared by
// all its senders, turning their control events into one stream of events.
// Control events (checkpoint barriers, watermarks, idleness, end of input)
// travel in band, so that they stay ordered with the records around them;
// barrier alignment is done by gating senders, so records after a barrier
// wait upstream, not in a buffer. A Pair reads the two inboxes of a join.
package stream
