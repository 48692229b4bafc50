package job

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/stream"
)

// progressEvery is how often a running job reports progress.
const progressEvery = 5 * time.Second

// LingerFlag registers a flag that the job sets every stream.Linger: the
// inbox that owns it hands its subtask's partial batches on.
func (j *Job) LingerFlag() *atomic.Bool {
	f := new(atomic.Bool)
	j.mu.Lock()
	j.lingers = append(j.lingers, f)
	j.mu.Unlock()
	return f
}

// linger asks every subtask, every stream.Linger, to hand its partial
// batches on.
func (j *Job) linger(done <-chan struct{}) {
	t := time.NewTicker(stream.Linger)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			j.cp.RequestFlush()
			j.mu.Lock()
			for _, f := range j.lingers {
				f.Store(true)
			}
			j.mu.Unlock()
		}
	}
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
			n := j.cp.RecordsRead()
			rate := float64(n-lastN) / now.Sub(last).Seconds()
			j.opts.Logger.Info(fmt.Sprintf("%s: %s records read, %s/s", now.Sub(start).Round(time.Second), count(n), count(int64(rate))), "records", n, "rate", int64(rate))
			last, lastN = now, n
		}
	}
}

// RecordsRead is the number of records the sources have read.
func (j *Job) RecordsRead() int64 { return j.cp.RecordsRead() }

// Summary is the line about the run's work printed when it is done.
func (j *Job) Summary() string {
	if m := j.cp.MalformedRecords(); m > 0 {
		return fmt.Sprintf("%s records read, %s malformed (skipped or sent to dead letters)", count(j.cp.RecordsRead()), count(m))
	}
	return fmt.Sprintf("%s records read", count(j.cp.RecordsRead()))
}

// MalformedRecords is the number of malformed records the sources skipped
// or sent to their dead letters.
func (j *Job) MalformedRecords() int64 { return j.cp.MalformedRecords() }

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
