package file

import (
	"context"
	"io"
	"sync"

	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// liveFile is the file a source or sink subtask has open, for the end of
// the job to close when the subtask's own goroutine does not: after a
// failure elsewhere in the job, or while it waited to hand records on.
// A job that restarts in its process would otherwise keep a descriptor
// per failed attempt, until it could open no more files.
//
// A subtask may open a file after the end of the job closed what it had:
// it goes on with the records it holds until it sees the job has ended.
// Such a file is closed as it is tracked. It was left to its finalizer:
// the program of internal/e2e/restart's soak, slowed down under strace,
// held up to 12 descriptors more at a panic than at its first ones (a
// sink subtask's in-progress file, opened by attempt after attempt),
// and make test under strace failed the soak twice; with this, at most
// 2 more, files being closed at that moment.
type liveFile struct {
	mu   sync.Mutex
	f    io.Closer
	shut bool // close ran: a file tracked now is closed at once
	done <-chan struct{}
}

// closeWhen closes the file open then when the job's context ends (after
// the subtask's goroutine has closed its file itself unless the job
// failed). context.AfterFunc starts a goroutine only then: none waits
// for it per subtask.
func (l *liveFile) closeWhen(ctx context.Context) {
	l.done = ctx.Done()
	context.AfterFunc(ctx, l.close)
}

// track makes f the file to close, nil for none: the subtask sets it
// when it opens a file, and clears it before it closes the file itself.
func (l *liveFile) track(f io.Closer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut && f != nil {
		// The subtask's next read or write fails, and ended makes
		// that the end of the job, not a failure.
		f.Close()
		return
	}
	l.f = f
}

// ended aborts the subtask with fault.ErrCanceled once the job has ended:
// an error of a file that the end of the job closed is not a failure of
// the subtask's own.
func (l *liveFile) ended() {
	select {
	case <-l.done:
		fault.Abort(fault.ErrCanceled)
	default:
	}
}

func (l *liveFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shut = true
	if l.f != nil {
		l.f.Close() // a failed attempt's: a sink's file was not pre-committed, and a restore removes it
		l.f = nil
	}
}
