// Package bad is the golden case of mistakes in a process operator with
// two inputs.
package bad

import "github.com/pipegen/pipegen"

type Payment struct {
	Card string `json:"card"`
}

type Block struct {
	Card string `json:"card"`
	ID   int    `json:"id"`
}

type Card struct{ N int }

type Other struct{ M int }

func PaymentCard(p Payment) string { return p.Card }
func BlockCard(b Block) string     { return b.Card }
func BlockID(b Block) int          { return b.ID }

func OnPayment(card string, c *Card, p Payment, ctx pipegen.Context, emit func(string)) {}
func OnBlock(card string, c *Card, b Block, ctx pipegen.Context, emit func(string))     {}
func OnBlockOtherState(card string, o *Other, b Block, ctx pipegen.Context, emit func(string)) {
}

type Blocked map[string]bool

func OnPaymentBC(card string, c *Card, p Payment, bc Blocked, ctx pipegen.Context, emit func(string)) {
}
func OnBlockBC(bc Blocked, b Block, ctx pipegen.Context, emit func(string)) {}
