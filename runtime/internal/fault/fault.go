// Package fault is how a subtask fails: Abort stops it from deep inside
// the per-record call chain, a panic in user code is annotated with the
// record and where it came from, and FromPanic turns what a subtask's
// goroutine recovered into the error that fails the job.
package fault

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// abort is the panic value of Abort: an error that stops the subtask.
type abort struct{ err error }

// Abort stops the calling subtask with err. Generated code and connectors
// call it deep inside the per-record call chain, where returning an error
// through every fused operator would cost on every record; the job's Go
// recovers it.
func Abort(err error) {
	panic(abort{err})
}

// Abortf is Abort with a formatted error.
func Abortf(format string, args ...any) {
	panic(abort{fmt.Errorf(format, args...)})
}

// ErrCanceled is the cause of blocking operations given up because the job
// is stopping; such a subtask did not fail by itself.
var ErrCanceled = errors.New("job canceled")

// FromPanic returns the error of subtask sub of node, given what its
// goroutine recovered.
func FromPanic(node string, sub int, r any) error {
	switch v := r.(type) {
	case abort:
		if errors.Is(v.err, ErrCanceled) {
			return v.err
		}
		return &SubtaskError{Node: node, Subtask: sub, Err: v.err}
	case *recordPanic:
		if v.node != "" {
			node, sub = v.node, v.sub
		}
		return &PanicError{Node: node, Subtask: sub, Value: v.value, Record: v.record, Origin: v.origin, Stack: v.stack}
	default:
		return &PanicError{Node: node, Subtask: sub, Value: r, Stack: debug.Stack()}
	}
}

// SubtaskError is a failure of subtask Subtask of the chain headed by
// Node.
type SubtaskError struct {
	Node    string
	Subtask int
	Err     error
}

func (e *SubtaskError) Error() string { return fmt.Sprintf("%s[%d]: %v", e.Node, e.Subtask, e.Err) }
func (e *SubtaskError) Unwrap() error { return e.Err }

// Where returns the chain head and subtask that err happened in, when it
// says.
func Where(err error) (node string, sub int, ok bool) {
	var se *SubtaskError
	if errors.As(err, &se) {
		return se.Node, se.Subtask, true
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		return pe.Node, pe.Subtask, true
	}
	return "", 0, false
}

// PanicError is a panic in user code, with the node and subtask it
// happened in and, where known, the record it was processing and where
// that record came from.
type PanicError struct {
	Node    string
	Subtask int
	Value   any
	Record  string // the record, printed with %+v
	Origin  string // file:line of the record, for a file source's chain
	Stack   []byte
}

func (e *PanicError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s[%d]: panic: %v", e.Node, e.Subtask, e.Value)
	if e.Record != "" {
		fmt.Fprintf(&b, "\nrecord: %s", e.Record)
	}
	if e.Origin != "" {
		fmt.Fprintf(&b, "\nfrom: %s", e.Origin)
	}
	fmt.Fprintf(&b, "\n\n%s", e.Stack)
	return b.String()
}

// recordPanic is a panic annotated, on its way up, with the record that
// caused it, where that came from, and the chain it happened in when that
// is not the goroutine's (InChain).
type recordPanic struct {
	value  any
	record string
	origin string
	stack  []byte
	node   string
	sub    int
}

// maxRecordText bounds how much of a record a panic message shows.
const maxRecordText = 300

// PanicWithRecord panics again with p annotated with the record being
// processed. Generated code calls it from a deferred recover around each
// batch: no cost per record until something panics.
func PanicWithRecord[T any](p any, rec T) {
	switch v := p.(type) {
	case abort:
		panic(p)
	case *recordPanic:
		if v.record == "" {
			v.record = recordText(rec)
		}
		panic(p)
	}
	// The stack still holds the frames of the panic: deferred calls run on
	// top of them.
	panic(&recordPanic{value: p, record: recordText(rec), stack: debug.Stack()})
}

// recordText is a record as a panic's error shows it.
func recordText(rec any) string {
	text := fmt.Sprintf("%+v", rec)
	if len(text) > maxRecordText {
		text = text[:maxRecordText] + "..."
	}
	return text
}

// InChain returns panic p annotated with the chain it happened in, head
// node and subtask sub, unless it names one already: a chain that runs in
// its sender's goroutine and takes its records by calls (the generated
// chain's direct) has no recover of its own, which would cost on every
// record, and its sender's names it (the generated blame). An abort goes
// on as it is: its error names the node.
func InChain(p any, node string, sub int) any {
	switch v := p.(type) {
	case abort:
		return p
	case *recordPanic:
		if v.node == "" {
			v.node, v.sub = node, sub
		}
		return v
	}
	return &recordPanic{value: p, stack: debug.Stack(), node: node, sub: sub}
}

// PanicWithOrigin panics again with p annotated with where the record came
// from: a file and line, or a generator's sequence number.
func PanicWithOrigin(p any, origin string) {
	switch v := p.(type) {
	case abort:
		panic(p)
	case *recordPanic:
		if v.origin == "" {
			v.origin = origin
		}
		panic(v)
	}
	panic(&recordPanic{value: p, origin: origin, stack: debug.Stack()})
}

// Fatal is a failure that a restart cannot mend: a bad setting, a missing
// input file, a checkpoint that does not fit the program.
type Fatal struct{ Err error }

func (e *Fatal) Error() string { return e.Err.Error() }
func (e *Fatal) Unwrap() error { return e.Err }

// Aborted returns the error that a value recovered from a panic aborted
// with, and false for any other panic.
func Aborted(r any) (error, bool) {
	a, ok := r.(abort)
	return a.err, ok
}
