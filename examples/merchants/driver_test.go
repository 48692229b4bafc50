package merchants_test

import (
	"slices"
	"testing"
	"time"

	"github.com/pipegen/pipegen/examples/merchants"
	"github.com/pipegen/pipegen/examples/merchants/merchantstest"
	"github.com/pipegen/pipegen/runtime"
)

//go:generate go run ../../cmd/pipegen generate -test -o merchantstest pipeline.yaml
//go:generate go run ../../cmd/pipegen generate -test

// driver is the test driver of merchants in both of its forms: from
// pipeline.yaml (package merchantstest) and from the directives
// (merchants_pipegen_test.go).
type driver interface {
	PushPayments(recs ...merchants.Payment)
	AdvanceProcessingTime(dt time.Duration)
	Checkpoint() int64
	Restore()
	End()
	EmittedOut() []string
	CommittedOut() []string
}

var forms = map[string]func(t testing.TB, o ...runtime.DriverOptions) driver{
	"yaml":       func(t testing.TB, o ...runtime.DriverOptions) driver { return merchantstest.New(t, o...) },
	"directives": func(t testing.TB, o ...runtime.DriverOptions) driver { return merchants.NewMerchantsDriver(t, o...) },
}

func pay(card, merchant string, cents int64) merchants.Payment {
	return merchants.Payment{Card: card, Merchant: merchant, Cents: cents}
}

// TestStateTTL: spend keeps a card's state and its merchants' entries for
// 24h of processing time after their last write (state-ttl: 24h). The
// driver's clock moves by hand: an entry written 23h ago is still there,
// one written 25h ago is gone, and so is the card's own state; a restore
// from a checkpoint in between keeps the write times. On both backends
// and in both forms.
func TestStateTTL(t *testing.T) {
	for form, newDriver := range forms {
		for _, backend := range []string{"memory", "pebble"} {
			for _, restore := range []bool{false, true} {
				name := form + "/" + backend
				if restore {
					name += "/restore"
				}
				t.Run(name, func(t *testing.T) {
					d := newDriver(t, runtime.DriverOptions{StateBackend: backend})
					d.PushPayments(pay("c1", "m1", 10), pay("c1", "m2", 20))
					d.AdvanceProcessingTime(23 * time.Hour)
					d.PushPayments(pay("c1", "m1", 5)) // m1 and the card written at 23h; m2 at 0h
					d.Checkpoint()
					if restore {
						d.AdvanceProcessingTime(time.Hour)
						d.PushPayments(pay("c2", "m9", 1)) // dropped by the restore, then replayed
						d.Restore()
					}
					d.AdvanceProcessingTime(2 * time.Hour) // 25h: m2 is gone, m1 and the card are not
					d.PushPayments(pay("c1", "m1", 1), merchants.Payment{Card: "c1", Close: true})
					d.PushPayments(pay("c3", "m1", 7))
					d.AdvanceProcessingTime(25 * time.Hour) // c3's state and entry are gone
					d.PushPayments(pay("c3", "m2", 3), merchants.Payment{Card: "c3", Close: true})
					d.End()
					want := []string{
						merchants.Line("c1", "m1", merchants.Spend{Count: 1, Cents: 10}),
						merchants.Line("c1", "m2", merchants.Spend{Count: 1, Cents: 20}),
						merchants.Line("c1", "m1", merchants.Spend{Count: 2, Cents: 15}),
					}
					if restore {
						want = append(want, merchants.Line("c2", "m9", merchants.Spend{Count: 1, Cents: 1}))
					}
					want = append(want,
						merchants.Line("c1", "m1", merchants.Spend{Count: 3, Cents: 16}),
						merchants.Closed("c1", 4, 1, "m1"), // the card kept its 4 payments; m2 expired
						merchants.Line("c3", "m1", merchants.Spend{Count: 1, Cents: 7}),
						merchants.Line("c3", "m2", merchants.Spend{Count: 1, Cents: 3}),
						merchants.Closed("c3", 1, 1, "m2"), // the first payment expired with its entry
					)
					if got := d.CommittedOut(); !slices.Equal(got, want) {
						t.Fatalf("output:\n got %q\nwant %q", got, want)
					}
				})
			}
		}
	}
}
