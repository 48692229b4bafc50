// Package adclicks is the example of joins: the clicks on ads attributed
// to the same user's impressions shortly before them (an interval join),
// and a user's impressions and clicks paired per window of event time (a
// window join).
//
// A generator makes Events, impressions and clicks of Users users, three
// per millisecond of event time, in order; two flatmaps split them into
// Impressions and Clicks, the joins' two inputs, keyed by user. Nothing
// is late (the generator's times never go back), so every pair is in the
// output: its crash test (crash_test.go) computes both outputs
// independently, and kills the job many times, on either state backend.
package adclicks

import "fmt"

// The pipeline of pipeline.yaml, as //pipegen: directives.
//
//pipegen:pipeline adclicks parallelism=2
//pipegen:sink attributed-out input=attributed connector=file path=attributed format=jsonl
//pipegen:sink same-window-out input=same-window connector=file path=same-window format=jsonl

// Events and Users are the numbers of events and users; a click is
// attributed to the impressions of its user from Skew ms after it to
// Within ms before it (bounds included: the servers' clocks differ, a
// click may be logged before its impression); Window is the window join's
// tumbling window, in milliseconds.
const (
	Events = 30_000
	Users  = 400
	Skew   = 200
	Within = 500
	Window = 200
)

// Event is an impression or a click, at Ms milliseconds of event time.
type Event struct {
	Seq   uint64 `json:"seq"`
	User  string `json:"user"`
	Click bool   `json:"click"`
	Ms    int64  `json:"ms"`
}

// scramble is the splitmix64 finaliser: consecutive numbers look random.
func scramble(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// GenerateEvent makes event seq: a click one time in three, else an
// impression, of a user drawn at random, at seq/3 ms (so that records of
// one time meet: their arrival order decides theirs).
//
//pipegen:source events connector=generator parallelism=1 timestamps.extract=EventTime
func GenerateEvent(seq uint64) (Event, bool) {
	if seq >= Events {
		return Event{}, false
	}
	h := scramble(seq)
	return Event{Seq: seq, User: fmt.Sprintf("user-%03d", h%Users), Click: h>>32%3 == 0, Ms: int64(seq / 3)}, true
}

func EventTime(e Event) int64 { return e.Ms }

// Impression is an ad shown to a user; Click a user's click.
type (
	Impression struct {
		Seq  uint64
		User string
		Ms   int64
	}
	Click struct {
		Seq  uint64
		User string
		Ms   int64
	}
)

// Impressions passes the impressions on.
//
//pipegen:flatmap impressions input=events
func Impressions(e Event, emit func(Impression)) {
	if !e.Click {
		emit(Impression{Seq: e.Seq, User: e.User, Ms: e.Ms})
	}
}

// Clicks passes the clicks on.
//
//pipegen:flatmap clicks input=events
func Clicks(e Event, emit func(Click)) {
	if e.Click {
		emit(Click{Seq: e.Seq, User: e.User, Ms: e.Ms})
	}
}

func ImpressionUser(i Impression) string { return i.User }
func ClickUser(c Click) string           { return c.User }

// Attribution is a click with an impression of its user at most Within
// ms before it, or Skew ms after it (Delay is then negative).
type Attribution struct {
	User       string `json:"user"`
	Impression uint64 `json:"impression"`
	Click      uint64 `json:"click"`
	Delay      int64  `json:"delay"`
}

// Attribute pairs a click with an impression of its user from Skew ms
// after it to Within ms before it.
//
//pipegen:join attributed inputs=impressions,clicks key=ImpressionUser,ClickUser between=-200ms,500ms
func Attribute(i Impression, c Click) Attribution {
	return Attribution{User: i.User, Impression: i.Seq, Click: c.Seq, Delay: c.Ms - i.Ms}
}

// Pair is an impression and a click of one user in one window.
type Pair struct {
	User       string `json:"user"`
	Window     int64  `json:"window"`
	Impression uint64 `json:"impression"`
	Click      uint64 `json:"click"`
}

// SameWindow pairs an impression and a click of a user in the same
// window of Window ms.
//
//pipegen:join same-window inputs=impressions,clicks key=ImpressionUser,ClickUser window.tumbling=200ms
func SameWindow(i Impression, c Click) Pair {
	return Pair{User: i.User, Window: i.Ms / Window * Window, Impression: i.Seq, Click: c.Seq}
}
