// Package metrics counts what a job does, for its /metrics, its status
// page and its end-of-run summary: per node and subtask the records in and
// out, bytes, records too late or malformed, source lag and watermarks;
// per chain subtask where its goroutine's time goes (busy, backpressured,
// idle) and how full its inbox is; per checkpoint its figures; restarts
// and recent failures.
//
// Counting stays off the per-record path. Generated code adds to plain
// counters of its own chain (an array in the chain's struct, one
// increment where a node emits) and publishes them here with Publish when
// the chain flushes: when idle, at least every Linger, and at its end.
// The data plane adds records received and times waited once per batch,
// and only when it had to wait. The scraper reads atomics.
//
// A Registry lives as long as the process: the counters of a job that
// restarts go on from where they were.
package metrics

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/config"
)

// Node is the counters of one subtask of one node.
type Node struct {
	// Out counts the records the node emitted on its main output.
	Out atomic.Uint64
	// In counts the records a chain head received from its inbox (or
	// both of a join's); the input of a fused node is its input's output.
	In atomic.Uint64
	// Late counts the records too late for a window or for the left
	// input of a join; LateRight those of a join's right input.
	Late, LateRight atomic.Uint64
	// Malformed counts a source's malformed records (skipped or sent to
	// its dead letters).
	Malformed atomic.Uint64
	// BytesIn is what a file source has read, BytesOut what a sink has
	// written.
	BytesIn, BytesOut atomic.Uint64
	// Lag is a source's input not read yet: bytes for a file source,
	// records (offsets) for a Kafka source; -1 when not known.
	Lag atomic.Int64
	// Drift is how far a source subtask's watermark is ahead of the
	// slowest other subtask of its alignment group (timestamps.max-drift),
	// in milliseconds, as of its latest watermark or wait: 0 when none
	// holds it back; math.MinInt64 when not known (no alignment, or no
	// watermarks yet).
	Drift atomic.Int64
	// Paused is how many of a Kafka source subtask's partitions wait
	// because they are ahead of its alignment group's slowest by more
	// than the maximum drift (split-level alignment); -1 without
	// alignment.
	Paused atomic.Int64
}

// Chain is the counters of one subtask of a chain: its goroutine. It is
// what generated code publishes to (see Publish) and what the data plane
// reports waits to (stream.Observer).
type Chain struct {
	// nodes are the chain's nodes, head first, for this subtask.
	nodes []*Node
	// Idle and Backpressured are the nanoseconds the goroutine waited for
	// input and for room downstream.
	idle, backpressured atomic.Int64
	// idleFrom and blockedFrom are when the wait for input, or for room
	// downstream, that goes on now started (Unix nanoseconds, 0 for
	// none): Times counts it before it ends, so that a chain blocked
	// for long shows as waiting, not busy.
	idleFrom, blockedFrom atomic.Int64
	// started and ended are when the goroutine started and ended (Unix
	// nanoseconds, 0 for not yet); idleSince, when a source read all its
	// input (from then on it only waits).
	started, ended, idleSince atomic.Int64
	// watermark is the chain's event time (math.MinInt64 for none).
	watermark atomic.Int64
	mu        sync.Mutex
	fill      []func() (n, capacity int)
}

// Publish adds a chain's counts to the metrics and zeroes them: counts
// holds, for each node of the chain in order, the records it emitted,
// then for each node the records too late for it (for a join, which heads
// its chain, those of its left input), then, for a join, the records of
// its right input too late for it.
func (c *Chain) Publish(counts []uint64) {
	k := len(c.nodes)
	if len(counts) > 2*k {
		if v := counts[2*k]; v != 0 {
			c.nodes[0].LateRight.Add(v)
			counts[2*k] = 0
		}
	}
	for i, n := range c.nodes {
		if v := counts[i]; v != 0 {
			n.Out.Add(v)
			counts[i] = 0
		}
		if k+i < len(counts) {
			if v := counts[k+i]; v != 0 {
				n.Late.Add(v)
				counts[k+i] = 0
			}
		}
	}
}

// Received counts a batch of n records taken from the chain's inbox.
func (c *Chain) Received(n int) { c.nodes[0].In.Add(uint64(n)) }

// Waiting records that the chain waits, since start, for input or
// (backpressured) for room downstream, until the next Idle or
// Backpressured.
func (c *Chain) Waiting(start time.Time, backpressured bool) {
	if backpressured {
		c.blockedFrom.Store(start.UnixNano())
	} else {
		c.idleFrom.Store(start.UnixNano())
	}
}

// Idle adds time the chain waited for input, and ends the wait.
func (c *Chain) Idle(d time.Duration) {
	c.idleFrom.Store(0)
	c.idle.Add(int64(d))
}

// Backpressured adds time the chain waited for room downstream, and ends
// the wait.
func (c *Chain) Backpressured(d time.Duration) {
	c.blockedFrom.Store(0)
	c.backpressured.Add(int64(d))
}

// Inbox adds a way to see how full one of the chain's inboxes is.
func (c *Chain) Inbox(fill func() (n, capacity int)) {
	c.mu.Lock()
	c.fill = append(c.fill, fill)
	c.mu.Unlock()
}

// Watermark records the chain's event time, in Unix milliseconds.
func (c *Chain) Watermark(w int64) { c.watermark.Store(w) }

// InputEnded records that a source subtask has read all its input: from
// now on it only waits for the others.
func (c *Chain) InputEnded() { c.idleSince.CompareAndSwap(0, time.Now().UnixNano()) }

// End records that the chain's goroutine has finished; a wait it was in
// (a job canceled while the chain waited) counts until now.
func (c *Chain) End() {
	now := time.Now().UnixNano()
	if s := c.idleFrom.Swap(0); s != 0 && s < now {
		c.idle.Add(now - s)
	}
	if s := c.blockedFrom.Swap(0); s != 0 && s < now {
		c.backpressured.Add(now - s)
	}
	c.ended.Store(now)
}

// Start records that the chain's goroutine (of a new attempt) runs; the
// time since the last attempt ended counts as idle.
func (c *Chain) start() {
	now := time.Now().UnixNano()
	c.started.CompareAndSwap(0, now)
	if e := c.ended.Swap(0); e != 0 {
		c.idle.Add(now - e)
	}
	c.idleSince.Store(0)
	// The inboxes are the new attempt's, which it registers after this
	// (Inbox): the last attempt's are gone, and kept here they would keep
	// that attempt's operators and their buffers (a job restarting over
	// and over grew by a file sink's buffer per attempt) and count in the
	// fill.
	c.mu.Lock()
	clear(c.fill)
	c.fill = c.fill[:0]
	c.mu.Unlock()
}

// Times is where a chain subtask's time went, in seconds since it first
// started: busy is the rest.
type Times struct {
	Busy          float64 `json:"busy"`
	Backpressured float64 `json:"backpressured"`
	Idle          float64 `json:"idle"`
	// Fill is how full its inboxes are, from 0 to 1; -1 for a source.
	Fill float64 `json:"fill"`
	// Ended is set once the subtask has finished.
	Ended bool `json:"ended"`
}

// Times returns where the chain's time went so far.
func (c *Chain) Times() Times {
	t := Times{Fill: -1}
	start := c.started.Load()
	if start == 0 {
		return t
	}
	end := c.ended.Load()
	now := time.Now().UnixNano()
	if end != 0 {
		now, t.Ended = end, true
	}
	// A wait that goes on counts up to now (End has counted it and
	// cleared it). Between a wait's end and its time's addition (Idle)
	// a read sees neither: a moment's busy time more, not less.
	idle := c.idle.Load()
	if s := c.idleSince.Load(); s != 0 && s < now {
		idle += now - s
	} else if s := c.idleFrom.Load(); s != 0 && s < now {
		idle += now - s
	}
	bp := c.backpressured.Load()
	if s := c.blockedFrom.Load(); s != 0 && s < now {
		bp += now - s
	}
	wall := now - start
	t.Idle = float64(idle) / 1e9
	t.Backpressured = float64(bp) / 1e9
	t.Busy = max(0, float64(wall-idle-bp)/1e9)
	c.mu.Lock()
	if len(c.fill) > 0 {
		n, capacity := 0, 0
		for _, f := range c.fill {
			a, b := f()
			n += a
			capacity += b
		}
		t.Fill = float64(n) / float64(max(capacity, 1))
	}
	c.mu.Unlock()
	return t
}

// WatermarkMillis is the chain's event time in Unix milliseconds, and
// whether it has one.
func (c *Chain) WatermarkMillis() (int64, bool) {
	w := c.watermark.Load()
	return w, w != math.MinInt64
}

// Checkpoint is one checkpoint as the status page lists it.
type Checkpoint struct {
	ID        int64         `json:"id"`
	Time      time.Time     `json:"time"`
	Final     bool          `json:"final,omitempty"`
	Duration  time.Duration `json:"duration"`
	Alignment time.Duration `json:"alignment"`
	Bytes     int64         `json:"bytes"`
	// Failed is why the checkpoint was given up, "" for a completed one.
	Failed string `json:"failed,omitempty"`
}

// Failure is a failure of the job, with the record it failed on when
// known.
type Failure struct {
	Time  time.Time `json:"time"`
	Error string    `json:"error"`
	// Node and Subtask are where it happened (the chain head), when known.
	Node    string `json:"node,omitempty"`
	Subtask int    `json:"subtask"`
	Record  string `json:"record,omitempty"`
	Origin  string `json:"origin,omitempty"`
	// Restarted tells whether the job restarted after it.
	Restarted bool `json:"restarted"`
}

// The job's states, as /readyz and the status page report them.
const (
	Starting   = "starting"
	Running    = "running"
	Restarting = "restarting"
	Finished   = "finished"
	Stopped    = "stopped"
	Failed     = "failed"
)

// keep bounds the checkpoints and failures a Registry remembers.
const keep = 100

// Registry is every counter of a job, for as long as its process runs.
type Registry struct {
	// Config is the job's settings after the command line.
	Config *config.Config
	// Start is when the process started the job.
	Start time.Time

	nodes  [][]*Node  // by node id, then subtask
	chains [][]*Chain // by the id of the chain's head, then subtask

	mu          sync.Mutex
	state       string
	checkpoints []Checkpoint
	completed   int64
	failedCk    int64
	restarts    int64
	failures    []Failure
	// observers get every checkpoint and failure event (the Prometheus
	// histograms).
	observers []func(Checkpoint)
}

// New makes the counters of a job with resolved settings cfg: every node
// of every subtask.
func New(cfg *config.Config) *Registry {
	r := &Registry{Config: cfg, Start: time.Now(), state: Starting}
	r.nodes = make([][]*Node, len(cfg.Nodes))
	r.chains = make([][]*Chain, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		p := max(n.Parallelism, 1)
		r.nodes[i] = make([]*Node, p)
		for s := range p {
			r.nodes[i][s] = &Node{}
			r.nodes[i][s].Lag.Store(-1)
			r.nodes[i][s].Drift.Store(math.MinInt64)
			r.nodes[i][s].Paused.Store(-1)
		}
		if n.FusedWith == "" {
			r.chains[i] = make([]*Chain, p)
			for s := range p {
				c := &Chain{}
				c.watermark.Store(math.MinInt64)
				r.chains[i][s] = c
			}
		}
	}
	return r
}

// Node returns the counters of subtask sub of node id. A subtask the
// settings do not have (a test's) gets counters nobody reads.
func (r *Registry) Node(id, sub int) *Node {
	if id < len(r.nodes) && sub < len(r.nodes[id]) {
		return r.nodes[id][sub]
	}
	return &Node{}
}

// Chain returns the counters of subtask sub of the chain headed by node
// head (counters nobody reads for a chain the settings do not have).
func (r *Registry) Chain(head, sub int) *Chain {
	if head < len(r.chains) && sub < len(r.chains[head]) {
		return r.chains[head][sub]
	}
	c := &Chain{}
	c.watermark.Store(math.MinInt64)
	return c
}

// Meter returns the counters of subtask sub of the chain of nodes (head
// first) for a run that starts now.
func (r *Registry) Meter(sub int, nodes ...int) *Chain {
	c := r.Chain(nodes[0], sub)
	if c.nodes == nil {
		for _, id := range nodes {
			c.nodes = append(c.nodes, r.Node(id, sub))
		}
	}
	c.start()
	return c
}

// EndAll records that every chain has ended, when a run of the job is
// over (a failed run's subtasks do not say so themselves).
func (r *Registry) EndAll() {
	now := time.Now().UnixNano()
	for _, cs := range r.chains {
		for _, c := range cs {
			if c.started.Load() != 0 {
				c.ended.CompareAndSwap(0, now)
			}
		}
	}
}

// SetState records the job's state.
func (r *Registry) SetState(s string) {
	r.mu.Lock()
	r.state = s
	r.mu.Unlock()
}

// State is the job's state.
func (r *Registry) State() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// OnCheckpoint calls f with every checkpoint from now on.
func (r *Registry) OnCheckpoint(f func(Checkpoint)) {
	r.mu.Lock()
	r.observers = append(r.observers, f)
	r.mu.Unlock()
}

// Event takes in an event of the job: checkpoints, failed checkpoints and
// restarts are counted. The events writer calls it for every event.
func (r *Registry) Event(e events.Event) {
	var ck *Checkpoint
	r.mu.Lock()
	switch e.Kind {
	case events.Checkpoint:
		r.completed++
		ck = &Checkpoint{ID: e.Checkpoint, Time: e.Time, Final: e.Final, Duration: e.Duration, Alignment: e.Alignment, Bytes: e.Bytes}
	case events.CheckpointFailed:
		r.failedCk++
		ck = &Checkpoint{ID: e.Checkpoint, Time: e.Time, Failed: e.Error}
	case events.Restart:
		r.restarts++
	}
	var obs []func(Checkpoint)
	if ck != nil {
		r.checkpoints = append(r.checkpoints, *ck)
		if len(r.checkpoints) > keep {
			r.checkpoints = r.checkpoints[len(r.checkpoints)-keep:]
		}
		obs = r.observers
	}
	r.mu.Unlock()
	for _, f := range obs {
		f(*ck)
	}
}

// Fail records a failure of the job.
func (r *Registry) Fail(f Failure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, f)
	if len(r.failures) > keep {
		r.failures = r.failures[len(r.failures)-keep:]
	}
}

// Summary is a snapshot of the job's checkpoints, restarts and failures.
type Summary struct {
	State       string
	Checkpoints []Checkpoint
	Completed   int64
	Failed      int64
	Restarts    int64
	Failures    []Failure
}

// Summary returns the job's checkpoints, restarts and failures so far.
func (r *Registry) Summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Summary{State: r.state, Checkpoints: append([]Checkpoint(nil), r.checkpoints...), Completed: r.completed, Failed: r.failedCk,
		Restarts: r.restarts, Failures: append([]Failure(nil), r.failures...)}
}

// Figures are one subtask's counts of one node, as /metrics and the status
// page show them.
type Figures struct {
	In, Out, Late, Malformed, BytesIn, BytesOut uint64
	// Late counts the records too late for the node (both inputs of a
	// join). Dropped counts the records the node dropped: late ones that
	// nothing reads (windows without a reader of their side output late,
	// joins without one of late-left or late-right), malformed ones a
	// source skipped.
	Dropped uint64
	Lag     int64
	// Drift is Node.Drift: math.MinInt64 when not known. Paused is
	// Node.Paused: -1 without alignment.
	Drift, Paused int64
}

// Figures returns the counts of subtask sub of node id. The input of a
// fused node is what its input emitted in the same subtask (on the side
// output it reads).
func (r *Registry) Figures(id, sub int) Figures {
	n := r.nodes[id][sub]
	f := Figures{Out: n.Out.Load(), In: n.In.Load(), Late: n.Late.Load() + n.LateRight.Load(), Malformed: n.Malformed.Load(),
		BytesIn: n.BytesIn.Load(), BytesOut: n.BytesOut.Load(), Lag: n.Lag.Load(), Drift: n.Drift.Load(), Paused: n.Paused.Load()}
	cfg := &r.Config.Nodes[id]
	if cfg.FusedWith != "" && len(cfg.Inputs) == 1 {
		in := cfg.Inputs[0]
		from := r.index(in.From)
		if from >= 0 && sub < len(r.nodes[from]) {
			src := r.nodes[from][sub]
			switch in.Side {
			case "":
				f.In = src.Out.Load()
			case "late", "late-left":
				f.In = src.Late.Load()
			case "late-right":
				f.In = src.LateRight.Load()
			case "dead-letter":
				f.In = src.Malformed.Load()
			}
		}
	}
	switch r.Dropped(id) {
	case "late":
		f.Dropped = f.Late
		if cfg.Kind == "join" {
			f.Dropped = 0
			if !r.read(cfg.Name, "late-left") {
				f.Dropped += n.Late.Load()
			}
			if !r.read(cfg.Name, "late-right") {
				f.Dropped += n.LateRight.Load()
			}
		}
	case "malformed":
		f.Dropped = f.Malformed
	}
	return f
}

// Dropped says why node id drops records, "" when it drops none.
func (r *Registry) Dropped(id int) string {
	cfg := &r.Config.Nodes[id]
	switch {
	case cfg.Kind == "source" && cfg.Option("on-error") == "skip":
		return "malformed"
	case cfg.Kind == "join" && cfg.JudgesLate() && !(r.read(cfg.Name, "late-left") && r.read(cfg.Name, "late-right")):
		return "late"
	case cfg.Kind != "join" && cfg.JudgesLate() && !r.read(cfg.Name, "late"):
		return "late"
	}
	return ""
}

// Total sums Figures over the subtasks of node id; its Drift is the
// largest of theirs.
func (r *Registry) Total(id int) Figures {
	var t Figures
	t.Lag, t.Drift, t.Paused = -1, math.MinInt64, -1
	for s := range r.nodes[id] {
		f := r.Figures(id, s)
		t.In += f.In
		t.Out += f.Out
		t.Late += f.Late
		t.Malformed += f.Malformed
		t.BytesIn += f.BytesIn
		t.BytesOut += f.BytesOut
		t.Dropped += f.Dropped
		if f.Lag >= 0 {
			t.Lag = max(t.Lag, 0) + f.Lag
		}
		t.Drift = max(t.Drift, f.Drift)
		if f.Paused >= 0 {
			t.Paused = max(t.Paused, 0) + f.Paused
		}
	}
	return t
}

// Subtasks is the number of subtasks of node id.
func (r *Registry) Subtasks(id int) int { return len(r.nodes[id]) }

// Head returns the id of the head of node id's chain.
func (r *Registry) Head(id int) int {
	for r.Config.Nodes[id].FusedWith != "" {
		id = r.index(r.Config.Nodes[id].FusedWith)
	}
	return id
}

func (r *Registry) index(name string) int {
	for i := range r.Config.Nodes {
		if r.Config.Nodes[i].Name == name {
			return i
		}
	}
	return -1
}

// read reports whether some node reads side output side of node name.
func (r *Registry) read(name, side string) bool {
	for _, n := range r.Config.Nodes {
		for _, in := range n.Inputs {
			if in.From == name && in.Side == side {
				return true
			}
		}
	}
	return false
}

// Drop is what one node dropped, or sent aside, by the end of a run.
type Drop struct {
	Node    int
	Section string
	Name    string
	Join    bool
	// Reason is "late" or "malformed"; Records how many it dropped.
	Reason  string
	Records uint64
	// Aside counts the records sent to a side output instead of being
	// dropped: late ones to NAME.late (of a join: NAME.late-left and
	// NAME.late-right), malformed ones to NAME.dead-letter. A join may
	// drop the late records of one input and send those of the other
	// aside.
	Aside uint64
}

// Drops lists the nodes that dropped records or sent them aside, in the
// order of the graph.
func (r *Registry) Drops() []Drop {
	var ds []Drop
	for id := range r.Config.Nodes {
		n := &r.Config.Nodes[id]
		t := r.Total(id)
		d := Drop{Node: id, Section: n.Section, Name: n.Name, Join: n.Kind == "join", Reason: r.Dropped(id), Records: t.Dropped}
		switch {
		case d.Join && t.Late > t.Dropped:
			d.Reason, d.Aside = "late", t.Late-t.Dropped
		case d.Reason == "" && t.Late > 0:
			d.Reason, d.Aside = "late", t.Late
		case d.Reason == "" && t.Malformed > 0:
			d.Reason, d.Aside = "malformed", t.Malformed
		}
		if d.Records > 0 || d.Aside > 0 {
			ds = append(ds, d)
		}
	}
	return ds
}

// Text says what a node dropped and why, for the end-of-run summary.
func (d Drop) Text() string {
	what := d.Section + "." + d.Name
	switch {
	case d.Join && d.Aside > 0 && d.Records > 0:
		return fmt.Sprintf("%s: sent %d records too late to be joined to its late side output, dropped %d more of the input whose side output nothing reads (%s.late-left or %s.late-right)", what, d.Aside, d.Records, d.Name, d.Name)
	case d.Join && d.Aside > 0:
		return fmt.Sprintf("%s: sent %d records too late to be joined to %s.late-left and %s.late-right", what, d.Aside, d.Name, d.Name)
	case d.Aside > 0 && d.Reason == "late":
		return fmt.Sprintf("%s: sent %d records too late for their window to %s.late", what, d.Aside, d.Name)
	case d.Aside > 0:
		return fmt.Sprintf("%s: sent %d malformed records to %s.dead-letter", what, d.Aside, d.Name)
	case d.Reason == "malformed":
		return fmt.Sprintf("%s: skipped %d malformed records (on-error: skip)", what, d.Records)
	case d.Join:
		return fmt.Sprintf("%s: dropped %d records too late to be joined (at or before the watermark of their input; read %s.late-left and %s.late-right to keep them)", what, d.Records, d.Name, d.Name)
	}
	return fmt.Sprintf("%s: dropped %d records too late for their window (past its end plus the allowed lateness; read %s.late to keep them)", what, d.Records, d.Name)
}
