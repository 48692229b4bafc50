// Package merchants keeps, per card, what the card spent at each
// merchant, in map state: a pipegen.MapState field of the process's state,
// whose entries are state of their own, so that a payment reads and
// writes its merchant's entry only.
//
// Each payment emits the merchant's count and total for the card so far.
// Every closing payment (Close) emits the number of merchants and the
// first of them in order (All), then clears the card's state, maps
// included (ctx.Clear). The output is a function of the payments alone,
// which the crash test computes without running the job.
package merchants

import (
	"fmt"

	"github.com/pipegen/pipegen"
)

// The pipeline of pipeline.yaml, as //pipegen: directives.
//
//pipegen:pipeline merchants parallelism=2
//pipegen:sink out input=spend connector=file path=out format=lines

// Payments is the number of payments the generator makes.
const Payments = 30000

// Payment is a card's payment at a merchant; Close ends the card's
// account (its state is cleared).
type Payment struct {
	Seq      uint64
	Card     string
	Merchant string
	Cents    int64
	Close    bool
}

// GeneratePayment makes payment seq: 40 cards, 500 merchants.
//
//pipegen:source payments connector=generator parallelism=1
func GeneratePayment(seq uint64) (Payment, bool) {
	if seq >= Payments {
		return Payment{}, false
	}
	h := seq*0x9e3779b97f4a7c15 ^ seq>>7
	return Payment{
		Seq:      seq,
		Card:     fmt.Sprintf("c%02d", h%40),
		Merchant: fmt.Sprintf("m%03d", h/40%500),
		Cents:    int64(seq%97 + 1),
		Close:    seq%2003 == 2002,
	}, true
}

func PaymentCard(p Payment) string { return p.Card }

// Card is what spend keeps per card.
type Card struct {
	Payments  int
	Merchants pipegen.MapState[string, Spend]
}

// Spend is a card's spending at one merchant.
type Spend struct {
	Count int
	Cents int64
}

// Track adds a payment to its merchant's entry and emits it; a closing
// payment emits the card's summary and clears its state.
//
//pipegen:process spend input=payments key=PaymentCard state-ttl=24h
func Track(card string, c *Card, p Payment, ctx pipegen.Context, emit func(string)) {
	if p.Close {
		emit(Closed(card, c.Payments, c.Merchants.Len(), first(c.Merchants)))
		ctx.Clear()
		return
	}
	c.Payments++
	s, _ := c.Merchants.Get(p.Merchant)
	s.Count++
	s.Cents += p.Cents
	c.Merchants.Put(p.Merchant, s)
	emit(Line(card, p.Merchant, s))
}

// first is the first merchant of m in order, "" when m is empty.
func first(m pipegen.MapState[string, Spend]) string {
	for k := range m.All() {
		return k
	}
	return ""
}

// Line is what a payment emits.
func Line(card, merchant string, s Spend) string {
	return fmt.Sprintf("%s %s %d %d", card, merchant, s.Count, s.Cents)
}

// Closed is what a closing payment emits.
func Closed(card string, payments, merchants int, first string) string {
	return fmt.Sprintf("%s closed after %d payments at %d merchants, first %q", card, payments, merchants, first)
}
