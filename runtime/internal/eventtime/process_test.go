package eventtime

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// TestProcessContext drives a context the way generated code does: a
// record's call, then the timers that fire, and checks what each call
// sees.
func TestProcessContext(t *testing.T) {
	timers := NewTimerService[string]()
	c := NewProcessContext("watch", timers, true, true)
	if !c.Timestamp().IsZero() || !c.Watermark().IsZero() {
		t.Fatalf("before any record: timestamp %v, watermark %v, want zero times", c.Timestamp(), c.Watermark())
	}
	var sent []string
	c.SetOutput(func(name string, v any) { sent = append(sent, fmt.Sprint(name, "=", v)) })

	c.Begin("a", 1500)
	if got := c.Timestamp().UnixMilli(); got != 1500 || c.Fired() != pipegen.NoTimer {
		t.Fatalf("in a record's call: timestamp %d, fired %v; want 1500, no timer", got, c.Fired())
	}
	c.TimerAt(time.UnixMilli(2000))
	c.TimerAt(time.UnixMilli(3000))
	c.ProcessingTimerAt(time.UnixMilli(2000))
	c.DeleteTimer(time.UnixMilli(2000))
	c.DeleteProcessingTimer(time.UnixMilli(9999)) // none: nothing happens
	c.Output("large", 7)
	if timers.Len() != 2 {
		t.Fatalf("%d timers after deleting one of three, want 2", timers.Len())
	}

	var fired []string
	fire := func(k string, at int64) {
		c.BeginTimer(k, at)
		fired = append(fired, fmt.Sprintf("%s@%d %v ts=%d", k, at, c.Fired(), c.Timestamp().UnixMilli()))
	}
	c.SetWatermark(5000)
	c.Firing(false)
	timers.AdvanceEvent(5000, fire)
	c.Firing(true)
	timers.AdvanceProcessing(5000, fire)
	want := "a@3000 event time ts=3000, a@2000 processing time ts=2000"
	if got := strings.Join(fired, ", "); got != want {
		t.Errorf("fired %s, want %s", got, want)
	}
	if got := c.Watermark().UnixMilli(); got != 5000 {
		t.Errorf("watermark %d, want 5000", got)
	}
	c.Begin("b", MinTime)
	if !c.Timestamp().IsZero() || c.Fired() != pipegen.NoTimer {
		t.Errorf("a record without event time: timestamp %v, fired %v", c.Timestamp(), c.Fired())
	}
	if strings.Join(sent, " ") != "large=7" {
		t.Errorf("side outputs got %v", sent)
	}
}

// TestProcessContextOutputWithoutSides checks that Output on an operator
// whose functions the compiler found no Output calls in fails the job
// with a message that says why.
func TestProcessContextOutputWithoutSides(t *testing.T) {
	c := NewProcessContext("watch", NewTimerService[string](), false, false)
	defer func() {
		err := fault.FromPanic("watch", 0, recover())
		if err == nil || !strings.Contains(err.Error(), "found no call of Output") {
			t.Errorf("Output without side outputs: got %v", err)
		}
	}()
	c.Output("x", 1)
}
