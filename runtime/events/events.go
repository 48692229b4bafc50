// Package events is the machine-readable record of what a generated
// program does: one JSON object per line, written by `run --events FILE`.
// The file is appended to, so that the processes of one job (restarted
// after a crash, say) add to one file. pipegen verify reads it to learn
// which process resumed from a checkpoint and which failure made the
// program restart its job; anyone watching a job can read it the same way.
// Log lines are for people and may be reworded; events are the contract.
package events

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// Kind says what happened.
type Kind string

// The kinds of events.
const (
	// Start: a process started the job.
	Start Kind = "start"
	// Resume: a run resumes from checkpoint Checkpoint, in folder Path.
	Resume Kind = "resume"
	// Checkpoint: checkpoint Checkpoint completed (Final: the last one,
	// taken at the end of the input) and its output is committed.
	Checkpoint Kind = "checkpoint"
	// CheckpointFailed: checkpoint Checkpoint was given up (Error); the job
	// goes on and the next checkpoint includes its data.
	CheckpointFailed Kind = "checkpoint-failed"
	// Restart: the job failed with Error and the program restarts it from
	// its newest checkpoint after Delay (restart number Attempt).
	Restart Kind = "restart"
	// Fail: the job failed with Error and the program gives up.
	Fail Kind = "fail"
	// Done: the job ran to its end; Records counts the records read,
	// Malformed the malformed ones among them.
	Done Kind = "done"
	// Stop: a signal or the stop command stopped the job at checkpoint
	// Checkpoint, whose output is committed; the next run resumes from
	// it. Records counts the records the run read.
	Stop Kind = "stop"
)

// Event is one line of an events file.
type Event struct {
	Time time.Time `json:"time"`
	Kind Kind      `json:"event"`
	// Job is the pipeline's name; PID the process that wrote the event.
	Job string `json:"job"`
	PID int    `json:"pid"`
	// Checkpoint is a checkpoint's id; Final marks the final one.
	Checkpoint int64 `json:"checkpoint,omitempty"`
	Final      bool  `json:"final,omitempty"`
	// Path is the folder of the checkpoint resumed from.
	Path string `json:"path,omitempty"`
	// Duration is how long a checkpoint took, Alignment the longest any
	// subtask's barriers took to align; Bytes what it wrote.
	Duration  time.Duration `json:"duration,omitempty"`
	Alignment time.Duration `json:"alignment,omitempty"`
	Bytes     int64         `json:"bytes,omitempty"`
	// Records counts the records read, at the end, and Malformed those of
	// them that were malformed (skipped or sent to dead letters).
	Records   int64 `json:"records,omitempty"`
	Malformed int64 `json:"malformed,omitempty"`
	// Dropped lists, at the end, the records each node dropped and why.
	Dropped []Drop `json:"dropped,omitempty"`
	// Error is the failure of a restart, a failed job or checkpoint.
	Error string `json:"error,omitempty"`
	// Delay is the wait before a restart, Attempt its number.
	Delay   time.Duration `json:"delay,omitempty"`
	Attempt int           `json:"attempt,omitempty"`
}

// Drop is how many records a node dropped, and why: "late" (too late
// for a window or a join, with nothing reading them), "malformed" (a
// source skipped them).
type Drop struct {
	Node    string `json:"node"`
	Reason  string `json:"reason"`
	Records int64  `json:"records"`
}

// Writer writes the events of one process. A nil *Writer drops them, so
// that code need not ask whether events are wanted.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer // nil: no file, only the tap
	job string
	pid int
	err error
	tap func(Event)
}

// Tap makes f see every event from now on, in the process, whether or not
// a file gets them (the metrics count checkpoints this way).
func (w *Writer) Tap(f func(Event)) {
	w.mu.Lock()
	w.tap = f
	w.mu.Unlock()
}

// NewWriter writes the events of job to w.
func NewWriter(w io.Writer, job string) *Writer {
	return &Writer{w: w, job: job, pid: os.Getpid()}
}

// Create opens the events file path for appending, creating it if needed.
func Create(path, job string) (*Writer, io.Closer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return NewWriter(f, job), f, nil
}

// Emit writes e, with its time, job and process filled in, as one line in
// one write: a process killed while it writes leaves at most that line
// torn, which Read skips. The first write error stops the events; the job
// goes on.
func (w *Writer) Emit(e Event) {
	if w == nil {
		return
	}
	e.Time = time.Now().UTC()
	e.Job, e.PID = w.job, w.pid
	w.mu.Lock()
	tap := w.tap
	w.mu.Unlock()
	if tap != nil {
		tap(e)
	}
	if w.w == nil {
		return
	}
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_, w.err = w.w.Write(append(line, '\n'))
	}
}

// Err is the first write error, nil when every event was written.
func (w *Writer) Err() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Read reads every event of r. A line that is not a whole event (the
// last line a killed process was writing) is skipped.
func Read(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Kind == "" {
			continue
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// ReadFile reads the events file path; a file that does not exist holds
// no events.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}
