// Package joins is the example of a window join on sessions: the clicks
// and the purchases of a shop's users, from two sources, and per user
// every purchase paired with every click of its visit, a session of both
// that a gap of Gap without either ends. The two sources run at their
// own pace, so the join sees a user's clicks and purchases in orders that
// differ from run to run: sessions of one side grow, and merge when a
// record of the other bridges them, in whatever order they come; the
// pairs are the same. On the pebble backend the sessions and their
// records are in the subtask's Pebble store; its crash test
// (crash_test.go) computes the pairs independently and runs on both
// backends.
package joins

import (
	"fmt"
	"time"
)

// The pipeline of pipeline.yaml, as //pipegen: directives.
//
//pipegen:pipeline sessionjoins parallelism=2
//pipegen:sink out input=visits connector=file path=out format=jsonl
//pipegen:sink late-clicks input=visits.late-left connector=file path=late-clicks format=jsonl
//pipegen:sink late-buys input=visits.late-right connector=file path=late-buys format=jsonl

// The workload: Clicks clicks, one every ClickEvery, and Buys purchases,
// one every BuyEvery, over the same time, of Users users; Gap and
// Lateness are the pipeline's session gap and allowed lateness.
const (
	Clicks     = 60_000
	Buys       = 12_000
	Users      = 300
	ClickEvery = 100 * time.Millisecond
	BuyEvery   = 500 * time.Millisecond
	Gap        = 30 * time.Second
	Lateness   = 10 * time.Second
)

// Jitter is how much earlier than its place a record may be: less than
// the sources' bound on out-of-orderness (2s), so that no record is late.
const Jitter = time.Second

type Click struct {
	Seq  uint64    `json:"seq"`
	User string    `json:"user"`
	At   time.Time `json:"at"`
}

type Buy struct {
	Seq  uint64    `json:"seq"`
	User string    `json:"user"`
	At   time.Time `json:"at"`
}

// epoch is the event time of the first record.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// GenerateClick makes click seq: a random user's, up to Jitter earlier
// than its place.
//
//pipegen:source clicks connector=generator parallelism=1 timestamps.extract=ClickTime timestamps.max-out-of-orderness=2s
func GenerateClick(seq uint64) (Click, bool) {
	if seq >= Clicks {
		return Click{}, false
	}
	user, at := place(seq, 0, ClickEvery)
	return Click{Seq: seq, User: user, At: at}, true
}

// GenerateBuy makes purchase seq, as GenerateClick makes a click.
//
//pipegen:source buys connector=generator parallelism=1 timestamps.extract=BuyTime timestamps.max-out-of-orderness=2s
func GenerateBuy(seq uint64) (Buy, bool) {
	if seq >= Buys {
		return Buy{}, false
	}
	user, at := place(seq, 1<<40, BuyEvery)
	return Buy{Seq: seq, User: user, At: at}, true
}

// place draws the user and the time of record seq of a source (salt
// keeps the sources' draws apart) that makes one every every.
func place(seq, salt uint64, every time.Duration) (string, time.Time) {
	h := scramble(seq + salt)
	at := epoch.Add(time.Duration(seq)*every - time.Duration(h>>20%uint64(Jitter.Milliseconds()))*time.Millisecond)
	return fmt.Sprintf("user-%03d", h%Users), at
}

// scramble is the splitmix64 finaliser: consecutive numbers look random.
func scramble(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func ClickTime(c Click) time.Time { return c.At }
func BuyTime(b Buy) time.Time     { return b.At }
func ByUser(c Click) string       { return c.User }
func BuyUser(b Buy) string        { return b.User }

// Attribution pairs a purchase with a click of the same visit.
type Attribution struct {
	User  string `json:"user"`
	Click uint64 `json:"click"`
	Buy   uint64 `json:"buy"`
}

// Attribute pairs click c and purchase b of one session.
//
//pipegen:join visits inputs=clicks,buys key=ByUser,BuyUser window.session=30s allowed-lateness=10s
func Attribute(c Click, b Buy) Attribution {
	return Attribution{User: c.User, Click: c.Seq, Buy: b.Seq}
}
