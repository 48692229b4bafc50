package runtime

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// progressEvery is how often a running job reports progress.
const progressEvery = 5 * time.Second

// SourceCtl is the control block of one source subtask: the barrier the
// checkpoint coordinator wants injected, and the count of records read, for
// the progress line.
type SourceCtl struct {
	barrier atomic.Int64
	records atomic.Int64
	j       *Job
	ended   bool
	wait    *time.Timer
}

// NewSourceCtl registers a source subtask with the job.
func (j *Job) NewSourceCtl() *SourceCtl {
	c := &SourceCtl{j: j}
	j.mu.Lock()
	j.sources = append(j.sources, c)
	j.mu.Unlock()
	return c
}

// Poll returns the id of a barrier to inject before the next record, -1
// when the subtask should hand its partial batches on (Linger has passed),
// or 0. Sources call it between records; it costs one atomic load.
func (c *SourceCtl) Poll() int64 {
	if c.barrier.Load() == 0 {
		return 0
	}
	return c.barrier.Swap(0)
}

// lingerFlag registers a flag that the job sets every Linger.
func (j *Job) lingerFlag() *atomic.Bool {
	f := new(atomic.Bool)
	j.mu.Lock()
	j.lingers = append(j.lingers, f)
	j.mu.Unlock()
	return f
}

// linger asks every subtask, every Linger, to hand its partial batches on.
func (j *Job) linger(done <-chan struct{}) {
	t := time.NewTicker(Linger)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			j.mu.Lock()
			for _, s := range j.sources {
				s.barrier.CompareAndSwap(0, -1)
			}
			for _, f := range j.lingers {
				f.Store(true)
			}
			j.mu.Unlock()
		}
	}
}

// atEndWait is how long a source at the end of its input waits for the
// other sources before it looks for a barrier again.
const atEndWait = 10 * time.Millisecond

// AtEnd is called by a source subtask that has read all of its input. It
// reports whether the subtask may end: once every source subtask of the job
// is at its end. Until then the subtask stays, injecting the barriers of the
// checkpoints taken meanwhile (with its final position), so that every
// checkpoint has every subtask and the ones that ended early need no
// special case.
func (c *SourceCtl) AtEnd() bool {
	if !c.ended {
		c.ended = true
		c.j.sourceAtEnd()
	}
	if c.j.Config.Checkpoint.Mode == NoCheckpoints {
		return true
	}
	if c.barrier.Load() != 0 {
		return false
	}
	if c.j.allAtEnd() {
		return true
	}
	if c.wait == nil {
		c.wait = time.NewTimer(atEndWait)
	} else {
		c.wait.Reset(atEndWait)
	}
	select {
	case <-c.j.allEnded:
	case <-c.wait.C:
	case <-c.j.ctx.Done():
		Abort(errCanceled)
	}
	return false
}

// Count adds n records to the progress count. Sources call it once per
// batch of reads, not per record.
func (c *SourceCtl) Count(n int) { c.records.Add(int64(n)) }

func (j *Job) recordsRead() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var n int64
	for _, s := range j.sources {
		n += s.records.Load()
	}
	return n
}

// reportProgress prints a line every progressEvery until done is closed.
func (j *Job) reportProgress(w io.Writer, done <-chan struct{}) {
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	start, last, lastN := time.Now(), time.Now(), int64(0)
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			n := j.recordsRead()
			rate := float64(n-lastN) / now.Sub(last).Seconds()
			fmt.Fprintf(w, "%s: %s: %s records read, %s/s\n", j.Config.Name, now.Sub(start).Round(time.Second), count(n), count(int64(rate)))
			last, lastN = now, n
		}
	}
}

func (j *Job) summary() string {
	return fmt.Sprintf("%s records read", count(j.recordsRead()))
}

// count prints a number the way people read it: 1234567 as 1.23M.
func count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
