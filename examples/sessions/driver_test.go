package sessions_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pipegen/pipegen/examples/sessions"
	"github.com/pipegen/pipegen/examples/sessions/sessionstest"
	"github.com/pipegen/pipegen/runtime"
)

//go:generate go run ../../cmd/pipegen generate -test -o sessionstest pipeline.yaml
//go:generate go run ../../cmd/pipegen generate -test

// driver is the test driver of sessions, in both of its forms: generated
// from pipeline.yaml (package sessionstest) and from the directives of
// sessions.go (sessions_pipegen_test.go).
type driver interface {
	PushClicks(recs ...sessions.Click)
	WatermarkClicks(at time.Time)
	Checkpoint() int64
	Restore()
	End()
	EmittedOut() []sessions.Session
	CommittedOut() []sessions.Session
	CommittedBounces() []sessions.Session
	CommittedLate() []sessions.Click
}

// forms make the driver of each form.
var forms = map[string]func(t testing.TB, o ...runtime.DriverOptions) driver{
	"yaml":       func(t testing.TB, o ...runtime.DriverOptions) driver { return sessionstest.New(t, o...) },
	"directives": func(t testing.TB, o ...runtime.DriverOptions) driver { return sessions.NewSessionsDriver(t, o...) },
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func click(seq uint64, user string, after time.Duration) sessions.Click {
	return sessions.Click{Seq: seq, User: user, At: t0.Add(after)}
}

// script drives sessions through two users' clicks, a late click, and the
// watermarks that close their sessions; restoreAt, when not empty, names
// the step after which the job crashes and is restored from the newest
// checkpoint (one is taken after step "late").
func script(t *testing.T, form, backend string, restoreAt string) driver {
	d := forms[form](t, runtime.DriverOptions{StateBackend: backend})
	step := func(name string) {
		if name == restoreAt {
			d.Restore()
		}
	}
	d.PushClicks(click(1, "alice", 0), click(2, "bob", 5*time.Second), click(3, "alice", 10*time.Second))
	step("push")
	d.WatermarkClicks(t0.Add(20 * time.Second))
	// The timers of the three clicks fired: sessions are open, none closed.
	if got := d.EmittedOut(); len(got) != 0 {
		t.Fatalf("out after the watermark 20s: %v, want none", got)
	}
	step("watermark")
	d.PushClicks(click(4, "alice", 15*time.Second)) // behind the watermark
	step("late")
	d.Checkpoint()
	d.PushClicks(click(5, "alice", 70*time.Second))
	step("after-checkpoint")
	d.WatermarkClicks(t0.Add(2 * time.Minute))
	step("closed")
	// Not committed yet: the next checkpoint commits it.
	if got := d.CommittedOut(); len(got) != 0 {
		t.Fatalf("committed out before the next checkpoint: %v, want none", got)
	}
	if got := d.EmittedOut(); len(got) != 1 {
		t.Fatalf("out after the watermark 2m: %v, want alice's session", got)
	}
	d.End()
	return d
}

// TestDriver checks sessions' three outputs at chosen watermarks, and that
// a crash and restore at any step gives the same outputs, on both state
// backends.
func TestDriver(t *testing.T) {
	wantOut := []sessions.Session{{User: "alice", Start: t0, Last: t0.Add(10 * time.Second), Clicks: 2}}
	wantBounces := []sessions.Session{
		{User: "bob", Start: t0.Add(5 * time.Second), Last: t0.Add(5 * time.Second), Clicks: 1},
		// at the end of input, the end of time closes it
		{User: "alice", Start: t0.Add(70 * time.Second), Last: t0.Add(70 * time.Second), Clicks: 1},
	}
	wantLate := []sessions.Click{click(4, "alice", 15*time.Second)}
	for _, form := range []string{"yaml", "directives"} {
		for _, backend := range []string{"memory", "pebble"} {
			for _, at := range []string{"", "push", "watermark", "late", "after-checkpoint", "closed"} {
				t.Run(form+"/"+backend+"/restore-"+cmpName(at), func(t *testing.T) {
					d := script(t, form, backend, at)
					if got := d.CommittedOut(); !slices.EqualFunc(got, wantOut, sameSession) {
						t.Errorf("out = %v, want %v", got, wantOut)
					}
					if got := d.CommittedBounces(); !slices.EqualFunc(got, wantBounces, sameSession) {
						t.Errorf("bounces = %v, want %v", got, wantBounces)
					}
					if got := d.CommittedLate(); !slices.Equal(got, wantLate) {
						t.Errorf("late = %v, want %v", got, wantLate)
					}
				})
			}
		}
	}
}

func sameSession(a, b sessions.Session) bool {
	return a.User == b.User && a.Start.Equal(b.Start) && a.Last.Equal(b.Last) && a.Clicks == b.Clicks
}

func cmpName(at string) string {
	if at == "" {
		return "none"
	}
	return at
}

// TestDocsExample is the example of docs/dsl.md ("Testing a pipeline"), as
// it is written there, with its printed lines checked.
func TestDocsExample(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := sessionstest.New(t) // or: runtime.DriverOptions{Parallelism: 2, StateBackend: "pebble"}
	d.PushClicks(
		sessions.Click{Seq: 1, User: "alice", At: t0},
		sessions.Click{Seq: 2, User: "bob", At: t0.Add(5 * time.Second)},
		sessions.Click{Seq: 3, User: "alice", At: t0.Add(10 * time.Second)})
	d.WatermarkClicks(t0.Add(20 * time.Second))                                       // the clicks' timers fire
	d.PushClicks(sessions.Click{Seq: 4, User: "alice", At: t0.Add(15 * time.Second)}) // behind: late
	d.Checkpoint()
	d.PushClicks(sessions.Click{Seq: 5, User: "alice", At: t0.Add(70 * time.Second)})
	d.WatermarkClicks(t0.Add(2 * time.Minute)) // closes alice's and bob's sessions
	d.Restore()                                // a crash: back to the checkpoint, then the replay
	d.End()                                    // the end of time: the last session closes
	if got, want := fmt.Sprint(d.CommittedOut()), "[{alice 2026-01-01 00:00:00 +0000 UTC 2026-01-01 00:00:10 +0000 UTC 2}]"; got != want {
		t.Errorf("CommittedOut() = %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(len(d.CommittedBounces()), len(d.CommittedLate())), "2 1"; got != want {
		t.Errorf("bounces and late: %s, want %s", got, want)
	}
}
