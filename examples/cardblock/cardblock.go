// Package cardblock is the example of a process operator with two inputs:
// payments are rejected while their card is blocked (Flink's connect and
// KeyedCoProcessFunction).
//
// Two generators make Payments and Blocks, both with event times; a
// process operator keyed by card reads both (a function per input, one
// state and one set of timers per card). Which of a card's payments and
// blocks comes first depends on how the two sources' goroutines run, so
// the operator decides by event time, not by arrival: a payment waits in
// the card's state until the watermark reaches its time (an event-time
// timer), when every block that started at or before it has arrived; it
// is accepted (the main output) or, when a block of its card covers its
// time, rejected (the side output rejected). A card's blocks are dropped
// by a timer at the end of the last one, which a longer block moves
// (DeleteTimer, TimerAt). So the output is the same in every run, and its
// crash test (crash_test.go) computes it independently: a payment is
// rejected exactly when a block of its card has From <= At < Until.
package cardblock

import (
	"fmt"
	"slices"
	"time"

	"github.com/pipegen/pipegen"
)

// The pipeline of pipeline.yaml, as //pipegen: directives.
//
//pipegen:pipeline cardblock parallelism=2
//pipegen:process check inputs=payments,blocks key=PaymentCard,BlockCard process=OnPayment,OnBlock on-timer=OnTimer
//pipegen:sink accepted input=check connector=file path=accepted format=lines
//pipegen:sink rejected input=check.rejected connector=file path=rejected format=jsonl

// Payments and Blocks are the numbers of events the generators make; Cards
// the number of cards.
const (
	Payments = 60_000
	Blocks   = 1_500
	Cards    = 100
)

// PaymentEvery and BlockEvery are the event times between two payments
// and two blocks: both sources cover the same span of event time.
const (
	PaymentEvery = 5 * time.Millisecond
	BlockEvery   = Payments * PaymentEvery / Blocks
)

// Payment is a card payment.
type Payment struct {
	Seq    uint64    `json:"seq"`
	Card   string    `json:"card"`
	Amount int64     `json:"amount"`
	At     time.Time `json:"at"`
}

// Block blocks a card from From until Until (exclusive).
type Block struct {
	Seq   uint64    `json:"seq"`
	Card  string    `json:"card"`
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
}

// Rejected is a payment made while its card was blocked.
type Rejected struct {
	Payment  Payment `json:"payment"`
	BlockSeq uint64  `json:"block"` // the earliest block that covers it
}

// scramble is the splitmix64 finaliser: consecutive numbers look random.
func scramble(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// epoch is the event time of the first events.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// CardName is the name of card c.
func CardName(c uint64) string { return fmt.Sprintf("card-%03d", c) }

// GeneratePayment makes payment seq.
//
//pipegen:source payments connector=generator timestamps.extract=PaymentTime
func GeneratePayment(seq uint64) (Payment, bool) {
	if seq >= Payments {
		return Payment{}, false
	}
	h := scramble(seq)
	return Payment{Seq: seq, Card: CardName(h % Cards), Amount: int64(h>>32%500 + 1), At: epoch.Add(time.Duration(seq) * PaymentEvery)}, true
}

// GenerateBlock makes block seq: a card blocked for 0.5 to 8 s of event
// time.
//
//pipegen:source blocks connector=generator timestamps.extract=BlockTime
func GenerateBlock(seq uint64) (Block, bool) {
	if seq >= Blocks {
		return Block{}, false
	}
	h := scramble(seq + 1<<40)
	from := epoch.Add(time.Duration(seq) * BlockEvery)
	return Block{Seq: seq, Card: CardName(h % Cards), From: from, Until: from.Add(time.Duration(h>>32%16+1) * 500 * time.Millisecond)}, true
}

func PaymentTime(p Payment) time.Time { return p.At }
func BlockTime(b Block) time.Time     { return b.From }
func PaymentCard(p Payment) string    { return p.Card }
func BlockCard(b Block) string        { return b.Card }

// CardState is what check keeps per card: the payments waiting for the
// watermark, the blocks that may still cover one, and the time of the
// timer that drops them (0: none).
type CardState struct {
	Pending []Payment
	Blocks  []Block
	DropAt  int64 // Unix milliseconds
}

// OnPayment keeps a payment until the watermark reaches its time.
func OnPayment(card string, s *CardState, p Payment, ctx pipegen.Context, emit func(string)) {
	s.Pending = append(s.Pending, p)
	ctx.TimerAt(ctx.Timestamp())
}

// OnBlock keeps a block, and moves the timer that drops the card's blocks
// to the end of the last one.
func OnBlock(card string, s *CardState, b Block, ctx pipegen.Context, emit func(string)) {
	s.Blocks = append(s.Blocks, b)
	if until := b.Until.UnixMilli(); until > s.DropAt {
		// A timer is a key and a time: a payment of that very millisecond
		// waits for the same timer, which must stay.
		if s.DropAt != 0 && !slices.ContainsFunc(s.Pending, func(p Payment) bool { return p.At.UnixMilli() == s.DropAt }) {
			ctx.DeleteTimer(time.UnixMilli(s.DropAt))
		}
		s.DropAt = until
		ctx.TimerAt(b.Until)
	}
}

// OnTimer decides the payments of the timer's time (each payment's own
// timer decides it: a timer lost in a crash would leave it undecided),
// then drops the blocks when their last one has ended.
func OnTimer(card string, s *CardState, at time.Time, ctx pipegen.Context, emit func(string)) {
	if ctx.Fired() != pipegen.EventTime {
		panic("check sets event-time timers only")
	}
	keep := s.Pending[:0]
	for _, p := range s.Pending {
		if !p.At.Equal(at) {
			keep = append(keep, p)
			continue
		}
		if b, ok := blockedBy(s.Blocks, p); ok {
			ctx.Output("rejected", Rejected{Payment: p, BlockSeq: b})
		} else {
			emit(Accepted(p))
		}
	}
	s.Pending = slices.Clip(keep)
	if at.UnixMilli() >= s.DropAt {
		s.Blocks, s.DropAt = nil, 0
	}
	if len(s.Pending) == 0 && len(s.Blocks) == 0 {
		ctx.Clear()
	}
}

// blockedBy returns the earliest of blocks that covers payment p.
func blockedBy(blocks []Block, p Payment) (uint64, bool) {
	var seq uint64
	found := false
	for _, b := range blocks {
		if !p.At.Before(b.From) && p.At.Before(b.Until) && (!found || b.Seq < seq) {
			seq, found = b.Seq, true
		}
	}
	return seq, found
}

// Accepted is the line of an accepted payment.
func Accepted(p Payment) string {
	return fmt.Sprintf("%s %d %d", p.Card, p.Seq, p.Amount)
}
