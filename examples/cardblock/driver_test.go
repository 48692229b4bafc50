package cardblock_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/examples/cardblock"
	"github.com/pipegen/pipegen/examples/cardblock/cardblocktest"
	"github.com/pipegen/pipegen/runtime"
)

//go:generate go run ../../cmd/pipegen generate -test -o cardblocktest pipeline.yaml
//go:generate go run ../../cmd/pipegen generate -test

// driver is the test driver of cardblock, in both of its forms:
// generated from pipeline.yaml (package cardblocktest) and from the
// directives of cardblock.go (cardblock_pipegen_test.go).
type driver interface {
	PushPayments(recs ...cardblock.Payment)
	PushBlocks(recs ...cardblock.Block)
	WatermarkPayments(at time.Time)
	WatermarkBlocks(at time.Time)
	AdvanceWatermark(at time.Time)
	Checkpoint() int64
	Restore()
	Rescale(p int)
	End()
	EmittedAccepted() []string
	CommittedAccepted() []string
	CommittedRejected() []cardblock.Rejected
}

var forms = map[string]func(t testing.TB, o ...runtime.DriverOptions) driver{
	"yaml":       func(t testing.TB, o ...runtime.DriverOptions) driver { return cardblocktest.New(t, o...) },
	"directives": func(t testing.TB, o ...runtime.DriverOptions) driver { return cardblock.NewCardblockDriver(t, o...) },
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func pay(seq uint64, card string, amount int64, after time.Duration) cardblock.Payment {
	return cardblock.Payment{Seq: seq, Card: card, Amount: amount, At: t0.Add(after)}
}

// script blocks card-1 from 10s to 20s and pays with it and with card-2
// before, during and after the block; the watermarks decide the payments.
// With restoreAt set, the job crashes after that step and is restored from
// the newest checkpoint (one is taken after step "decided"); with
// "rescale-STEP", onto parallelism 2.
func script(t *testing.T, form string, o runtime.DriverOptions, restoreAt string) driver {
	d := forms[form](t, o)
	step := func(name string) {
		switch restoreAt {
		case name:
			d.Restore()
		case "rescale-" + name:
			d.Rescale(2) // a restore onto two subtasks of every node
		}
	}
	d.PushBlocks(cardblock.Block{Seq: 1, Card: "card-1", From: t0.Add(10 * time.Second), Until: t0.Add(20 * time.Second)})
	d.PushPayments(pay(1, "card-1", 5, 5*time.Second), pay(2, "card-1", 15, 15*time.Second), pay(3, "card-2", 16, 16*time.Second))
	step("pushed")
	// Only the blocks' watermark moves: check waits for the payments'.
	d.WatermarkBlocks(t0.Add(time.Minute))
	if got := d.EmittedAccepted(); len(got) != 0 {
		t.Fatalf("accepted before the payments' watermark: %v", got)
	}
	d.WatermarkPayments(t0.Add(15 * time.Second))
	step("decided")
	d.Checkpoint()
	d.PushPayments(pay(4, "card-1", 25, 25*time.Second))
	step("after-checkpoint")
	d.AdvanceWatermark(t0.Add(time.Minute))
	step("end")
	d.End()
	return d
}

// TestDriver checks which payments check accepts and rejects while a
// block is in force, with a crash and restore at every step, on both
// state backends and at parallelism 2.
func TestDriver(t *testing.T) {
	wantAccepted := []string{"card-1 1 5", "card-2 3 16", "card-1 4 25"}
	wantRejected := []cardblock.Rejected{{Payment: pay(2, "card-1", 15, 15*time.Second), BlockSeq: 1}}
	for _, form := range []string{"yaml", "directives"} {
		for _, o := range []runtime.DriverOptions{{StateBackend: "memory"}, {StateBackend: "pebble"}, {Parallelism: 2}} {
			for _, at := range []string{"none", "pushed", "decided", "after-checkpoint", "end", "rescale-after-checkpoint"} {
				t.Run(fmt.Sprintf("%s/%s/p%d/restore-%s", form, o.StateBackend, max(o.Parallelism, 1), at), func(t *testing.T) {
					d := script(t, form, o, at)
					got := d.CommittedAccepted()
					if o.Parallelism > 1 || strings.HasPrefix(at, "rescale") {
						// subtask by subtask: the order is not the one of time
						slices.Sort(got)
						wantAccepted := slices.Sorted(slices.Values(wantAccepted))
						if !slices.Equal(got, wantAccepted) {
							t.Errorf("accepted = %q, want %q", got, wantAccepted)
						}
					} else if !slices.Equal(got, wantAccepted) {
						t.Errorf("accepted = %q, want %q", got, wantAccepted)
					}
					if got := d.CommittedRejected(); !slices.EqualFunc(got, wantRejected, func(a, b cardblock.Rejected) bool {
						return a.BlockSeq == b.BlockSeq && a.Payment.Seq == b.Payment.Seq && a.Payment.At.Equal(b.Payment.At)
					}) {
						t.Errorf("rejected = %v, want %v", got, wantRejected)
					}
				})
			}
		}
	}
}

// TestDriverDecidesAtTheWatermark: a payment is decided when the watermark
// of both inputs reaches its time, not before.
func TestDriverDecidesAtTheWatermark(t *testing.T) {
	d := forms["directives"](t)
	d.PushPayments(pay(1, "card-1", 5, 5*time.Second))
	d.AdvanceWatermark(t0.Add(4 * time.Second))
	if got := d.EmittedAccepted(); len(got) != 0 {
		t.Fatalf("accepted at watermark 4s: %q, want none", got)
	}
	d.AdvanceWatermark(t0.Add(5 * time.Second))
	if got := d.EmittedAccepted(); !slices.Equal(got, []string{"card-1 1 5"}) {
		t.Fatalf("accepted at watermark 5s: %q", got)
	}
	if got := d.CommittedAccepted(); len(got) != 0 {
		t.Fatalf("committed before a checkpoint: %q", got)
	}
	d.Checkpoint()
	if got := d.CommittedAccepted(); !slices.Equal(got, []string{"card-1 1 5"}) {
		t.Fatalf("committed after a checkpoint: %q", got)
	}
}
