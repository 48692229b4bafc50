// Package mapstate is the golden case of map state: a process's state
// struct with a pipegen.MapState field, read and written entry by entry,
// iterated in order, and cleared with the rest of the key's state.
package mapstate

import (
	"fmt"
	"strings"

	"github.com/pipegen/pipegen"
)

type Payment struct {
	Card     string  `json:"card"`
	Merchant string  `json:"merchant"`
	Amount   float64 `json:"amount"`
}

func ByCard(p Payment) string { return p.Card }

// Card is what spend keeps per card: its number of payments, and per
// merchant what the card spent there.
type Card struct {
	N         int
	Merchants pipegen.MapState[string, Spend]
}

// Spend is a card's spending at one merchant.
type Spend struct {
	Count int
	Total float64
}

// Track adds a payment to its merchant's entry. A payment to merchant
// "report" lists the card's merchants in order instead; "forget" deletes
// the merchant named by the amount's index in that order; "close" clears
// the card's state, maps included.
func Track(card string, c *Card, p Payment, ctx pipegen.Context, emit func(string)) {
	switch p.Merchant {
	case "report":
		var parts []string
		for m, s := range c.Merchants.All() {
			parts = append(parts, fmt.Sprintf("%s=%d/%.2f", m, s.Count, s.Total))
		}
		emit(fmt.Sprintf("%s: %d payments at %d merchants: %s", card, c.N, c.Merchants.Len(), strings.Join(parts, " ")))
		return
	case "forget":
		i := int(p.Amount)
		for m := range c.Merchants.All() {
			if i == 0 {
				c.Merchants.Delete(m)
				emit(fmt.Sprintf("%s: forgot %s (still there: %v)", card, m, c.Merchants.Contains(m)))
				return
			}
			i--
		}
		return
	case "close":
		emit(fmt.Sprintf("%s: closed after %d payments", card, c.N))
		ctx.Clear()
		return
	}
	c.N++
	s, seen := c.Merchants.Get(p.Merchant)
	s.Count++
	s.Total += p.Amount
	c.Merchants.Put(p.Merchant, s)
	if !seen {
		emit(fmt.Sprintf("%s: new merchant %s", card, p.Merchant))
	}
}
