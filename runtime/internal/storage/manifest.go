package storage

import (
	"time"
)

// manifestFormat is the version of the checkpoint layout. Format 2 holds
// no absolute paths: sink files are named relative to their sink's
// directory, so that a job folder can be moved or copied. Format 3 holds
// the tumbling and sliding windows of the memory backend pane by pane
// (eventtime's layoutPanes, named in each section's header), which a
// version that reads format 2 at most would take for corrupt state: it
// refuses the manifest instead. Formats 1 (upgradeFormat1) and 2 (the
// same manifest; its windows in the layout of one entry per window) are
// read too.
const manifestFormat = 3

// Manifest describes one completed checkpoint.
type Manifest struct {
	Format int    `json:"format"`
	ID     int64  `json:"id"`
	Job    string `json:"job"`
	// Fingerprint identifies the job's topology and state schemas.
	Fingerprint string    `json:"fingerprint,omitempty"`
	Time        time.Time `json:"time"`
	Final       bool      `json:"final,omitempty"`
	// Savepoint is set in the manifest of a savepoint: a copy of a
	// checkpoint in canonical, self-contained form (savepoint.go).
	Savepoint bool `json:"savepoint,omitempty"`
	// SavepointID names a savepoint wherever it is moved (random, set
	// when it is written); Origin is the SavepointID of the savepoint the
	// state descends from, so that a run started with --from-savepoint
	// and interrupted resumes from its own newest checkpoint when the same
	// command line runs again.
	SavepointID    string      `json:"savepointId,omitempty"`
	Origin         string      `json:"origin,omitempty"`
	Mode           string      `json:"mode"`
	MaxParallelism int         `json:"maxParallelism"`
	Nodes          []NodeState `json:"nodes"`
	Stats          Stats       `json:"stats"`
}

// NodeState is what one node contributed to a checkpoint.
type NodeState struct {
	UID         string `json:"uid"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Parallelism int    `json:"parallelism"`
	// Connector is a source's or sink's connector.
	Connector string `json:"connector,omitempty"`
	// KeySchema and ValueSchema describe the keyed state's types, field
	// ids included, so that a later version can tell what it reads.
	KeySchema   string `json:"keySchema,omitempty"`
	ValueSchema string `json:"valueSchema,omitempty"`
	// BroadcastSchema describes a process node's broadcast state, a map
	// the same on every subtask (state "broadcast" of its Files).
	BroadcastSchema string        `json:"broadcastSchema,omitempty"`
	Files           []StateFile   `json:"files,omitempty"`
	Sources         []SourceState `json:"sources,omitempty"`
	Sinks           []SinkState   `json:"sinks,omitempty"`
	// Subtasks hold each subtask's event-time progress.
	Subtasks []SubtaskState `json:"subtasks,omitempty"`
}

// SubtaskState is the event-time progress of one subtask: the watermarks
// of its inbox's senders, or its source's watermark generator.
type SubtaskState struct {
	Subtask    int     `json:"subtask"`
	Watermarks []int64 `json:"watermarks,omitempty"`
	Generator  []byte  `json:"generator,omitempty"`
}

// StateFile is (part of) the keyed state of one subtask.
//
// A subtask's state may take several files, in order: a full one (Kind
// "") and then deltas (Kind "delta") that each hold the keys changed
// since the file before, with their new values or their deletion. Files
// that several checkpoints share (Shared) are in the checkpoint
// directory's folder shared/, named once; the others are in the
// checkpoint's own folder.
type StateFile struct {
	Subtask int `json:"subtask"`
	// State names one of several states of a node ("" for its main one).
	State  string `json:"state,omitempty"`
	Name   string `json:"name"`
	Kind   string `json:"kind,omitempty"`
	Shared bool   `json:"shared,omitempty"`
	// Store is the file's name in its Pebble store (Kind "pebble").
	Store     string `json:"store,omitempty"`
	KeyGroups [2]int `json:"keyGroups"` // [start, end)
	Size      int64  `json:"size"`
	CRC       uint32 `json:"crc"`
	// Entries is the number of entries of a memory state's file (a full
	// file's keys, a delta's values and deletions), so that a restore
	// makes room for them at once; 0 when unknown (checkpoints before it
	// was recorded).
	Entries int64 `json:"entries,omitempty"`
	// Keys is the number of keys a memory state's subtask held at the
	// barrier: what its chain of files up to this one holds. A delta's
	// Entries says nothing of it (a delta of a state that only changes
	// values adds no key); a restore makes its index that large. 0 when
	// unknown (checkpoints before it was recorded, savepoints).
	Keys int64 `json:"keys,omitempty"`
}

// The kinds of state files.
const (
	// KindDelta holds changes on top of the files before it.
	KindDelta = "delta"
	// KindPebble is a file of a subtask's Pebble store, as the store
	// wrote it (an sstable, its MANIFEST, its OPTIONS, a marker): the
	// subtask's files of one checkpoint are the store at its barrier.
	KindPebble = "pebble"
)

// SourceState is a source subtask's read position.
type SourceState struct {
	Subtask  int    `json:"subtask"`
	Position []byte `json:"position"`
	// AtEnd is set when the subtask had read all of its input.
	AtEnd bool `json:"atEnd,omitempty"`
}

// SinkState is a transactional sink subtask's state: the files that hold
// records up to this checkpoint and are not committed yet, and the number
// its next file takes.
//
// The files are named relative to the sink's directory, which the run
// that commits them resolves from its own settings: a moved job folder
// commits its files where they are now, and a copy never touches the
// original's.
type SinkState struct {
	Subtask int    `json:"subtask"`
	NextSeq uint64 `json:"nextSeq"`
	// Path is the sink's path as it was set (relative to the working
	// directory unless written absolute). It is used only to commit the
	// files of a sink that a later version of the job no longer has.
	Path    string        `json:"path,omitempty"`
	Pending []PendingFile `json:"pending,omitempty"`
	// Transactions are a Kafka sink subtask's transactions that hold its
	// records up to this checkpoint and are not committed yet: flushed
	// (pre-committed) at a barrier, committed when the checkpoint is.
	Transactions []Transaction `json:"transactions,omitempty"`
}

// Transaction is one Kafka transaction a checkpoint commits: its
// transactional id and the producer id and epoch it was written with,
// which name it on the broker.
type Transaction struct {
	ID       string `json:"id"`
	Producer int64  `json:"producer"`
	Epoch    int16  `json:"epoch"`
}

// PendingFile is a sink file that the checkpoint commits. Its names are
// file names in the sink's directory, not paths.
type PendingFile struct {
	Seq     uint64 `json:"seq"`
	Pending string `json:"pending"` // hidden name while pending
	Final   string `json:"final"`   // visible name once committed
}

// Stats are a checkpoint's figures, as logged when it completes.
type Stats struct {
	Duration  time.Duration `json:"duration"`
	Alignment time.Duration `json:"alignment"`
	// Stall is the longest time a subtask stopped processing records
	// for its snapshot (from taking it to handing it to the writers).
	Stall        time.Duration `json:"stall,omitempty"`
	BytesWritten int64         `json:"bytesWritten"`
	StateSize    int64         `json:"stateSize"`
}

// SinkConnector is the connector that commits the node's sink files: file
// in manifests written before connectors were recorded.
func (n *NodeState) SinkConnector() string {
	if n.Connector == "" {
		return "file"
	}
	return n.Connector
}

// ConnectorOr is the node's recorded connector, or def for a manifest
// written before connectors were recorded.
func (n *NodeState) ConnectorOr(def string) string {
	if n.Connector == "" {
		return def
	}
	return n.Connector
}

// Node returns the state of the node with the given uid, or nil.
func (m *Manifest) Node(uid string) *NodeState {
	for i := range m.Nodes {
		if m.Nodes[i].UID == uid {
			return &m.Nodes[i]
		}
	}
	return nil
}
