// Package fraud is the example of broadcast state: a card-block fraud
// check with a rules table (Flink's broadcast state pattern).
//
// Two generators make Payments and Rules, both with event times. A rule
// says, for one category of payment, from when on a payment over Max
// blocks its card for BlockFor; a later rule of the category replaces it.
// The process operator check reads the payments keyed by card and the
// rules as a broadcast input: every subtask gets every rule, and OnRule
// writes it into the broadcast state, the rules table (a map, the same on
// every subtask), which the keyed functions read.
//
// How payments and rules interleave differs from run to run, so check
// decides by event time: a payment waits in its card's state until the
// watermark reaches its time (its own event-time timer), when every rule
// in force at that time has arrived at every subtask. Then it is rejected
// while its card is blocked (side output rejected), blocks the card and is
// rejected when it is over its category's limit (side output alerts too),
// and is accepted otherwise (the main output). So the output is the same
// in every run, and its crash test (crash_test.go) computes it
// independently, payment by payment in time order.
package fraud

import (
	"fmt"
	"slices"
	"time"

	"github.com/pipegen/pipegen"
)

// The pipeline of pipeline.yaml, as //pipegen: directives.
//
//pipegen:pipeline fraud parallelism=2
//pipegen:process check inputs=payments,rules broadcast=rules key=PaymentCard process=OnPayment,OnRule on-timer=OnTimer
//pipegen:sink accepted input=check connector=file path=accepted format=lines
//pipegen:sink rejected input=check.rejected connector=file path=rejected format=jsonl
//pipegen:sink alerts input=check.alerts connector=file path=alerts format=jsonl

// Payments, Rules and Cards are the numbers of payments, rules and cards.
const (
	Payments = 60_000
	Rules    = 200
	Cards    = 300
)

// Categories are the kinds of payment a rule is for.
var Categories = []string{"cash", "fuel", "grocery", "online", "travel"}

// PaymentEvery and RuleEvery are the event times between two payments
// and two rules: both sources cover the same span of event time.
const (
	PaymentEvery = 5 * time.Millisecond
	RuleEvery    = Payments * PaymentEvery / Rules
)

// epoch is the event time of the first events.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type Payment struct {
	Seq      uint64    `json:"seq"`
	Card     string    `json:"card"`
	Category string    `json:"category"`
	Amount   int64     `json:"amount"`
	At       time.Time `json:"at"`
}

// Rule blocks a card for BlockFor when one of its payments of Category is
// over Max, from From on (until a later rule of the category).
type Rule struct {
	Seq      uint64        `json:"seq"`
	Category string        `json:"category"`
	Max      int64         `json:"max"`
	BlockFor time.Duration `json:"block_for"`
	From     time.Time     `json:"from"`
}

// Rejected is a payment refused, and why.
type Rejected struct {
	Payment Payment `json:"payment"`
	Reason  string  `json:"reason"` // "blocked" or "over limit"
}

// Alert says a card was blocked: by which payment, which rule, until when.
type Alert struct {
	Card    string    `json:"card"`
	Payment uint64    `json:"payment"`
	Rule    uint64    `json:"rule"`
	Until   time.Time `json:"until"`
}

// scramble is the splitmix64 finaliser: consecutive numbers look random.
func scramble(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// GeneratePayment makes payment seq.
//
//pipegen:source payments connector=generator timestamps.extract=PaymentTime
func GeneratePayment(seq uint64) (Payment, bool) {
	if seq >= Payments {
		return Payment{}, false
	}
	h := scramble(seq)
	return Payment{
		Seq:      seq,
		Card:     fmt.Sprintf("card-%03d", h%Cards),
		Category: Categories[h>>16%uint64(len(Categories))],
		Amount:   int64(h>>32%1000 + 1),
		At:       epoch.Add(time.Duration(seq) * PaymentEvery),
	}, true
}

// GenerateRule makes rule seq: the first ones, one per category, are in
// force from the start.
//
//pipegen:source rules connector=generator parallelism=1 timestamps.extract=RuleTime
func GenerateRule(seq uint64) (Rule, bool) {
	if seq >= Rules {
		return Rule{}, false
	}
	h := scramble(seq + 1<<40)
	from := epoch.Add(time.Duration(seq) * RuleEvery)
	cat := Categories[h%uint64(len(Categories))]
	if seq < uint64(len(Categories)) {
		from, cat = epoch, Categories[seq]
	}
	return Rule{Seq: seq, Category: cat, Max: int64(h>>16%5+6) * 100, BlockFor: time.Duration(h>>32%3+1) * time.Second, From: from}, true
}

func PaymentTime(p Payment) time.Time { return p.At }
func RuleTime(r Rule) time.Time       { return r.From }
func PaymentCard(p Payment) string    { return p.Card }

// RuleTable is the broadcast state: the rules of each category, in the
// order they come into force.
type RuleTable = map[string][]Rule

// CardState is what check keeps per card: the payments waiting for the
// watermark, and until when the card is blocked (Unix milliseconds).
type CardState struct {
	Pending      []Payment
	BlockedUntil int64
}

// OnRule adds a rule to the table. Every subtask runs it for every rule:
// it must do the same everywhere, so it depends on the rule alone (the
// rules arrive in the order of their time, but sorting makes the table
// the same whatever the order).
func OnRule(table RuleTable, r Rule, ctx pipegen.Context, emit func(string)) {
	rs := append(table[r.Category], r)
	slices.SortFunc(rs, func(a, b Rule) int {
		if c := a.From.Compare(b.From); c != 0 {
			return c
		}
		return int(a.Seq) - int(b.Seq)
	})
	table[r.Category] = rs
}

// OnPayment keeps a payment until the watermark reaches its time.
func OnPayment(card string, s *CardState, p Payment, table RuleTable, ctx pipegen.Context, emit func(string)) {
	s.Pending = append(s.Pending, p)
	ctx.TimerAt(ctx.Timestamp())
}

// OnTimer decides the payment of the timer's time (each payment has its
// own millisecond).
func OnTimer(card string, s *CardState, at time.Time, table RuleTable, ctx pipegen.Context, emit func(string)) {
	for _, p := range s.Pending {
		if !p.At.Equal(at) {
			continue
		}
		switch rule, ok := InForce(table[p.Category], p.At); {
		case p.At.UnixMilli() < s.BlockedUntil:
			ctx.Output("rejected", Rejected{Payment: p, Reason: "blocked"})
		case ok && p.Amount > rule.Max:
			until := p.At.Add(rule.BlockFor)
			s.BlockedUntil = until.UnixMilli()
			ctx.Output("rejected", Rejected{Payment: p, Reason: "over limit"})
			ctx.Output("alerts", Alert{Card: card, Payment: p.Seq, Rule: rule.Seq, Until: until})
		default:
			emit(Accepted(p))
		}
	}
	s.Pending = slices.DeleteFunc(s.Pending, func(p Payment) bool { return p.At.Equal(at) })
	if len(s.Pending) == 0 && s.BlockedUntil <= at.UnixMilli() {
		ctx.Clear()
	}
}

// InForce is the rule of rules (one category's, in the order they come
// into force) in force at t: the last one from t or before.
func InForce(rules []Rule, t time.Time) (Rule, bool) {
	var in Rule
	ok := false
	for _, r := range rules {
		if r.From.After(t) {
			break
		}
		in, ok = r, true
	}
	return in, ok
}

// Accepted is the line of an accepted payment.
func Accepted(p Payment) string {
	return fmt.Sprintf("%s %d %s %d", p.Card, p.Seq, p.Category, p.Amount)
}
