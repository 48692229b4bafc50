// Package pair is golden/process-pair written as //pipegen: directives
// (the generated code only: golden/process-pair runs it): a process
// operator with two inputs, its functions named by process= in a comment
// of its own. A process operator with two inputs has
// a function per input, one state and one set of timers per key. A payment
// is decided when the watermark reaches its time: rejected while a block of
// its card covers it, else accepted.
package pair

//pipegen:pipeline process-pair parallelism=2
//pipegen:source payments connector=file path=payments.jsonl format=jsonl type=Payment timestamps.extract=PaymentTime
//pipegen:source blocks connector=file path=blocks.jsonl format=jsonl type=Block timestamps.extract=BlockTime
//pipegen:process check inputs=payments,blocks key=PaymentCard,BlockCard process=OnPayment,OnBlock on-timer=OnTimer
//pipegen:sink accepted input=check connector=file path=accepted
//pipegen:sink rejected input=check.rejected connector=file path=rejected

import (
	"fmt"
	"slices"
	"time"

	"github.com/pipegen/pipegen"
)

type Payment struct {
	Card   string `json:"card"`
	Amount int64  `json:"amount"`
	Ms     int64  `json:"ms"`
}

type Block struct {
	Card  string `json:"card"`
	Ms    int64  `json:"ms"`
	Until int64  `json:"until"`
}

func PaymentTime(p Payment) int64  { return p.Ms }
func BlockTime(b Block) int64      { return b.Ms }
func PaymentCard(p Payment) string { return p.Card }
func BlockCard(b Block) string     { return b.Card }

type Card struct {
	Pending []Payment
	Blocks  []Block
}

func OnPayment(card string, c *Card, p Payment, ctx pipegen.Context, emit func(string)) {
	c.Pending = append(c.Pending, p)
	ctx.TimerAt(ctx.Timestamp())
}

func OnBlock(card string, c *Card, b Block, ctx pipegen.Context, emit func(string)) {
	c.Blocks = append(c.Blocks, b)
}

func OnTimer(card string, c *Card, at time.Time, ctx pipegen.Context, emit func(string)) {
	ms := at.UnixMilli()
	for _, p := range c.Pending {
		if p.Ms != ms {
			continue
		}
		if slices.ContainsFunc(c.Blocks, func(b Block) bool { return b.Ms <= p.Ms && p.Ms < b.Until }) {
			ctx.Output("rejected", fmt.Sprintf("%s %d @%d rejected", card, p.Amount, p.Ms))
		} else {
			emit(fmt.Sprintf("%s %d @%d accepted", card, p.Amount, p.Ms))
		}
	}
	c.Pending = slices.DeleteFunc(c.Pending, func(p Payment) bool { return p.Ms == ms })
}
