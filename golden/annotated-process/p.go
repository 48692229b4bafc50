// Package process is golden/process written as //pipegen: directives, on
// the pebble state backend: a process operator's context, timers and side
// outputs.
package process

//pipegen:pipeline process parallelism=2 state.backend=pebble
//pipegen:source payments connector=file parallelism=1 path=payments.jsonl format=jsonl type=Payment timestamps.extract=PaymentTime timestamps.max-out-of-orderness=500ms
//pipegen:sink out input=watch connector=file path=out
//pipegen:sink large input=large-lines connector=file path=large
//pipegen:sink behind input=watch.behind connector=file path=behind

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen"
)

type Payment struct {
	Card   string  `json:"card"`
	Amount float64 `json:"amount"`
	Ms     int64   `json:"ms"`
}

func PaymentTime(p Payment) int64 { return p.Ms }

func ByCard(p Payment) string { return p.Card }

// Card is what watch keeps per card: the payments since the card was last
// idle, and its pending idle timer.
type Card struct {
	N     int
	Total float64
	Timer int64 // Unix milliseconds; 0: none
}

// Large is a payment over the limit, sent to the side output "large".
type Large struct {
	Card   string
	Amount float64
	At     int64
}

// Watch counts a card's payments and reports the card idle 1s of event
// time after its last payment: each payment moves the timer. A payment
// over 100 goes to the side output large as well, one behind the
// watermark to behind.
//
//pipegen:process watch input=payments key=ByCard on-timer=Idle
func Watch(card string, c *Card, p Payment, ctx pipegen.Context, emit func(string)) {
	c.N++
	c.Total += p.Amount
	if p.Amount > 100 {
		ctx.Output("large", Large{Card: card, Amount: p.Amount, At: ctx.Timestamp().UnixMilli()})
	}
	if ctx.Timestamp().Before(ctx.Watermark()) {
		behind(ctx, p)
	}
	if c.Timer != 0 {
		ctx.DeleteTimer(time.UnixMilli(c.Timer))
	}
	c.Timer = max(c.Timer, p.Ms+1000)
	ctx.TimerAt(time.UnixMilli(c.Timer))
}

// behind is a helper of Watch: the compiler finds its call of Output too.
func behind(ctx pipegen.Context, p Payment) {
	ctx.Output("behind", fmt.Sprintf("%s %.2f @%d behind the watermark %d", p.Card, p.Amount, p.Ms, ctx.Watermark().UnixMilli()))
}

func Idle(card string, c *Card, at time.Time, ctx pipegen.Context, emit func(string)) {
	emit(fmt.Sprintf("%s idle at %d (%s timer, timestamp %d): %d payments, %.2f", card, at.UnixMilli(), ctx.Fired(), ctx.Timestamp().UnixMilli(), c.N, c.Total))
	ctx.Clear()
}

//pipegen:map large-lines input=watch.large
func LargeLine(l Large) string { return fmt.Sprintf("large %s %.2f @%d", l.Card, l.Amount, l.At) }
