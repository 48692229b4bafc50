// Package bc is golden/process-broadcast written as //pipegen: directives,
// on the pebble state backend (the generated code only: golden/process-
// broadcast runs on both backends). Broadcast state: the limits reach every
// subtask of check, whose broadcast function keeps them in a table that
// the keyed functions read; a payment is decided when the watermark
// reaches its time, against the limit of its category in force then.
package bc

//pipegen:pipeline process-broadcast parallelism=2 state.backend=pebble
//pipegen:source payments connector=file path=payments.jsonl format=jsonl type=Payment timestamps.extract=PaymentTime
//pipegen:source limits connector=file path=limits.jsonl format=jsonl type=Limit timestamps.extract=LimitTime
//pipegen:process check inputs=payments,limits broadcast=limits key=PaymentCard process=OnPayment,OnLimit on-timer=OnTimer
//pipegen:sink accepted input=check connector=file path=accepted
//pipegen:sink over input=check.over connector=file path=over

import (
	"fmt"
	"slices"
	"time"

	"github.com/pipegen/pipegen"
)

type Payment struct {
	Card     string `json:"card"`
	Category string `json:"category"`
	Amount   int64  `json:"amount"`
	Ms       int64  `json:"ms"`
}

// Limit is the most a payment of Category may be, from Ms on.
type Limit struct {
	Category string `json:"category"`
	Max      int64  `json:"max"`
	Ms       int64  `json:"ms"`
}

func PaymentTime(p Payment) int64  { return p.Ms }
func LimitTime(l Limit) int64      { return l.Ms }
func PaymentCard(p Payment) string { return p.Card }

// Limits is the broadcast state: each category's limits in time order.
type Limits map[string][]Limit

type Card struct{ Pending []Payment }

func OnLimit(limits Limits, l Limit, ctx pipegen.Context, emit func(string)) {
	ls := append(limits[l.Category], l)
	slices.SortStableFunc(ls, func(a, b Limit) int { return int(a.Ms - b.Ms) })
	limits[l.Category] = ls
}

func OnPayment(card string, c *Card, p Payment, limits Limits, ctx pipegen.Context, emit func(string)) {
	c.Pending = append(c.Pending, p)
	ctx.TimerAt(ctx.Timestamp())
}

func OnTimer(card string, c *Card, at time.Time, limits Limits, ctx pipegen.Context, emit func(string)) {
	ms := at.UnixMilli()
	for _, p := range c.Pending {
		if p.Ms != ms {
			continue
		}
		max := int64(-1)
		for _, l := range limits[p.Category] {
			if l.Ms <= p.Ms {
				max = l.Max
			}
		}
		if max >= 0 && p.Amount > max {
			ctx.Output("over", fmt.Sprintf("%s %s %d @%d over %d", card, p.Category, p.Amount, p.Ms, max))
		} else {
			emit(fmt.Sprintf("%s %s %d @%d", card, p.Category, p.Amount, p.Ms))
		}
	}
	c.Pending = slices.DeleteFunc(c.Pending, func(p Payment) bool { return p.Ms == ms })
	if len(c.Pending) == 0 {
		ctx.Clear()
	}
}
