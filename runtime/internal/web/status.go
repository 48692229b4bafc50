package web

import (
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
)

// JobStatus is what /api/status answers and the status page draws: the
// job graph with every subtask's counts, where each chain subtask's time
// goes, checkpoints and failures. Counts are totals since the process
// started; the page turns two of them into rates.
type JobStatus struct {
	Job         string               `json:"job"`
	Source      string               `json:"source"`
	State       string               `json:"state"`
	Mode        string               `json:"mode"`
	Started     time.Time            `json:"started"`
	Now         time.Time            `json:"now"`
	Nodes       []NodeStatus         `json:"nodes"`
	Checkpoints []metrics.Checkpoint `json:"checkpoints"`
	Completed   int64                `json:"completed"`
	Failed      int64                `json:"failed"`
	Restarts    int64                `json:"restarts"`
	Failures    []metrics.Failure    `json:"failures"`
}

// NodeStatus is one node of the graph.
type NodeStatus struct {
	Name      string             `json:"name"`
	Kind      string             `json:"kind"`
	Section   string             `json:"section"`
	Connector string             `json:"connector,omitempty"`
	Window    string             `json:"window,omitempty"`
	Head      string             `json:"head"`
	Inputs    []config.NodeInput `json:"inputs"`
	// Dropped says why the node drops records ("late", "malformed"), ""
	// when it drops none.
	Dropped  string          `json:"dropped,omitempty"`
	Subtasks []SubtaskStatus `json:"subtasks"`
}

// SubtaskStatus is one subtask of a node: its counts and, for a chain
// head, where its goroutine's time went.
type SubtaskStatus struct {
	In        uint64 `json:"in"`
	Out       uint64 `json:"out"`
	Late      uint64 `json:"late"`
	Dropped   uint64 `json:"dropped"`
	Malformed uint64 `json:"malformed"`
	BytesIn   uint64 `json:"bytesIn"`
	BytesOut  uint64 `json:"bytesOut"`
	Lag       int64  `json:"lag"`
	// Watermark is the event time in Unix milliseconds, nil for none.
	Watermark *int64 `json:"watermark"`
	// Times are set for a chain head only.
	Times *metrics.Times `json:"times,omitempty"`
}

// Status reads the job's counters.
func Status(r *metrics.Registry) JobStatus {
	sum := r.Summary()
	st := JobStatus{Job: r.Config.Name, Source: r.Config.Source, State: sum.State, Mode: r.Config.Checkpoint.Mode,
		Started: r.Start.UTC(), Now: time.Now().UTC(), Checkpoints: sum.Checkpoints, Completed: sum.Completed,
		Failed: sum.Failed, Restarts: sum.Restarts, Failures: sum.Failures}
	if st.Checkpoints == nil {
		st.Checkpoints = []metrics.Checkpoint{}
	}
	if st.Failures == nil {
		st.Failures = []metrics.Failure{}
	}
	for id := range r.Config.Nodes {
		n := &r.Config.Nodes[id]
		head := r.Head(id)
		ns := NodeStatus{Name: n.Name, Kind: n.Kind, Section: n.Section, Connector: n.Connector, Window: n.Window,
			Head: r.Config.Nodes[head].Name, Inputs: n.Inputs, Dropped: r.Dropped(id)}
		if ns.Inputs == nil {
			ns.Inputs = []config.NodeInput{}
		}
		for sub := range r.Subtasks(id) {
			f := r.Figures(id, sub)
			ss := SubtaskStatus{In: f.In, Out: f.Out, Late: f.Late, Dropped: f.Dropped, Malformed: f.Malformed,
				BytesIn: f.BytesIn, BytesOut: f.BytesOut, Lag: f.Lag}
			if w, ok := r.Chain(head, sub).WatermarkMillis(); ok {
				ss.Watermark = &w
			}
			if head == id {
				t := r.Chain(id, sub).Times()
				ss.Times = &t
			}
			ns.Subtasks = append(ns.Subtasks, ss)
		}
		st.Nodes = append(st.Nodes, ns)
	}
	return st
}
