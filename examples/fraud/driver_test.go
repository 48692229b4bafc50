package fraud_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/examples/fraud"
	"github.com/pipegen/pipegen/examples/fraud/fraudtest"
	"github.com/pipegen/pipegen/runtime"
)

//go:generate go run ../../cmd/pipegen generate -test -o fraudtest pipeline.yaml
//go:generate go run ../../cmd/pipegen generate -test

// driver is the test driver of fraud, in both of its forms: generated
// from pipeline.yaml (package fraudtest) and from the directives of
// fraud.go (fraud_pipegen_test.go).
type driver interface {
	PushPayments(recs ...fraud.Payment)
	PushRules(recs ...fraud.Rule)
	AdvanceWatermark(at time.Time)
	Checkpoint() int64
	Restore()
	Rescale(p int)
	End()
	CommittedAccepted() []string
	CommittedRejected() []fraud.Rejected
	CommittedAlerts() []fraud.Alert
}

var forms = map[string]func(t testing.TB, o ...runtime.DriverOptions) driver{
	"yaml":       func(t testing.TB, o ...runtime.DriverOptions) driver { return fraudtest.New(t, o...) },
	"directives": func(t testing.TB, o ...runtime.DriverOptions) driver { return fraud.NewFraudDriver(t, o...) },
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func pay(seq uint64, card string, amount int64, after time.Duration) fraud.Payment {
	return fraud.Payment{Seq: seq, Card: card, Category: "online", Amount: amount, At: t0.Add(after)}
}

// script sets a limit of 500 on online payments from 0s, and one of 100
// from 30s; a payment over the limit blocks its card for 5s. With
// restoreAt set, the job crashes after that step and is restored from the
// newest checkpoint (one is taken after step "decided"); with
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
	d.PushRules(fraud.Rule{Seq: 1, Category: "online", Max: 500, BlockFor: 5 * time.Second, From: t0})
	d.PushPayments(pay(1, "card-1", 600, time.Second), pay(2, "card-1", 10, 3*time.Second), pay(3, "card-2", 400, 4*time.Second))
	step("pushed")
	d.AdvanceWatermark(t0.Add(10 * time.Second))
	step("decided")
	d.Checkpoint()
	d.PushRules(fraud.Rule{Seq: 2, Category: "online", Max: 100, BlockFor: 5 * time.Second, From: t0.Add(30 * time.Second)})
	d.PushPayments(pay(4, "card-1", 200, 20*time.Second), pay(5, "card-2", 200, 40*time.Second))
	step("after-checkpoint")
	d.AdvanceWatermark(t0.Add(time.Minute))
	step("end")
	d.End()
	return d
}

// TestDriver checks the accepted and rejected payments and the alerts of
// a rules table that changes, with a crash and restore at every step, on
// both state backends and at parallelism 2 (the rules reach every
// subtask).
func TestDriver(t *testing.T) {
	wantAccepted := []string{"card-2 3 online 400", "card-1 4 online 200"}
	wantRejected := []string{"1 over limit", "2 blocked", "5 over limit"}
	wantAlerts := []fraud.Alert{
		{Card: "card-1", Payment: 1, Rule: 1, Until: t0.Add(6 * time.Second)},
		{Card: "card-2", Payment: 5, Rule: 2, Until: t0.Add(45 * time.Second)},
	}
	for _, form := range []string{"yaml", "directives"} {
		for _, o := range []runtime.DriverOptions{{StateBackend: "memory"}, {StateBackend: "pebble"}, {Parallelism: 2}} {
			for _, at := range []string{"none", "pushed", "decided", "after-checkpoint", "end", "rescale-after-checkpoint"} {
				t.Run(fmt.Sprintf("%s/%s/p%d/restore-%s", form, o.StateBackend, max(o.Parallelism, 1), at), func(t *testing.T) {
					d := script(t, form, o, at)
					accepted := d.CommittedAccepted()
					var rejected []string
					for _, r := range d.CommittedRejected() {
						rejected = append(rejected, fmt.Sprintf("%d %s", r.Payment.Seq, r.Reason))
					}
					alerts := d.CommittedAlerts()
					want := wantAccepted
					if o.Parallelism > 1 || strings.HasPrefix(at, "rescale") {
						// listed subtask by subtask, not in the order of time
						slices.Sort(accepted)
						slices.Sort(rejected)
						slices.SortFunc(alerts, func(a, b fraud.Alert) int { return int(a.Payment) - int(b.Payment) })
						want = slices.Sorted(slices.Values(want))
					}
					if !slices.Equal(accepted, want) {
						t.Errorf("accepted = %q, want %q", accepted, want)
					}
					if !slices.Equal(rejected, wantRejected) {
						t.Errorf("rejected = %q, want %q", rejected, wantRejected)
					}
					if !slices.EqualFunc(alerts, wantAlerts, func(a, b fraud.Alert) bool {
						return a.Card == b.Card && a.Payment == b.Payment && a.Rule == b.Rule && a.Until.Equal(b.Until)
					}) {
						t.Errorf("alerts = %v, want %v", alerts, wantAlerts)
					}
				})
			}
		}
	}
}
