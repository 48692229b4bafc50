package fault

import (
	"errors"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// recovered runs f and returns what it panicked with.
func recovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// TestInChain: a panic in a chain that ran in its sender's goroutine (a
// direct call, no recover of its own) names that chain, the innermost
// that InChain was given, not the goroutine's; the sender's record and
// origin are added on the way up.
func TestInChain(t *testing.T) {
	p := recovered(func() {
		defer func() {
			p := recover()
			p = InChain(InChain(p, "inner", 2), "outer", 1)
			PanicWithOrigin(p, "sources.gen, sequence number 7")
		}()
		panic("boom")
	})
	err := FromPanic("gen", 0, p)
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("FromPanic = %T %v, want a *PanicError", err, err)
	}
	if pe.Node != "inner" || pe.Subtask != 2 || pe.Value != "boom" || pe.Origin != "sources.gen, sequence number 7" || pe.Record != "" {
		t.Errorf("got node %q[%d], value %v, origin %q, record %q; want inner[2], boom, the origin, no record", pe.Node, pe.Subtask, pe.Value, pe.Origin, pe.Record)
	}
	if len(pe.Stack) == 0 {
		t.Error("no stack")
	}

	// A batch's recover adds its record to a panic that has none.
	p = recovered(func() {
		defer func() { PanicWithRecord(InChain(recover(), "keyed", 0), struct{ K int }{3}) }()
		panic("boom")
	})
	if err := FromPanic("src", 0, p); !errors.As(err, &pe) || pe.Node != "keyed" || pe.Record != "{K:3}" {
		t.Errorf("FromPanic = %v, want keyed[0] and record {K:3}", err)
	}

	// Without InChain, the goroutine's chain.
	p = recovered(func() {
		defer func() { PanicWithRecord(recover(), 5) }()
		panic("boom")
	})
	if err := FromPanic("src", 1, p); !errors.As(err, &pe) || pe.Node != "src" || pe.Subtask != 1 || pe.Record != "5" {
		t.Errorf("FromPanic = %v, want src[1] and record 5", err)
	}

	// An abort is the subtask's error, as it was.
	p = recovered(func() {
		defer func() { panic(InChain(recover(), "keyed", 0)) }()
		Abortf("sinks.out: full")
	})
	var se *SubtaskError
	if err := FromPanic("src", 0, p); !errors.As(err, &se) || se.Node != "src" || se.Err.Error() != "sinks.out: full" {
		t.Errorf("FromPanic = %v, want src[0]: sinks.out: full", err)
	}
}
