package jobtest

import (
	"fmt"
	"maps"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/golden/driver"
	"github.com/pipegen/pipegen/runtime"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func order(customer string, amount int, after time.Duration) driver.Order {
	return driver.Order{Customer: customer, Amount: amount, At: t0.Add(after)}
}

// TestProcessingTimer: the reminders fire when the driver's clock passes
// RemindAfter, not before, and not on a watermark.
func TestProcessingTimer(t *testing.T) {
	for _, backend := range []string{"memory", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			d := New(t, runtime.DriverOptions{StateBackend: backend})
			d.PushOrders(order("alice", 50, 0), order("bob", 120, time.Second), order("alice", 100, 2*time.Second))
			d.WatermarkOrders(t0.Add(time.Hour))
			d.AdvanceProcessingTime(driver.RemindAfter / 2)
			if got := d.EmittedReminders(); len(got) != 0 {
				t.Fatalf("reminders before RemindAfter: %q", got)
			}
			d.Checkpoint()
			d.AdvanceProcessingTime(driver.RemindAfter)
			want := []string{"alice: 2 orders, 150 (processing time timer)", "bob: 1 orders, 120 (processing time timer)"}
			got := d.EmittedReminders()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("reminders after RemindAfter: %q, want %q", got, want)
			}
			// Restored from the checkpoint before the clock moved: the
			// reminders are dropped, and fire again in the replay.
			d.Restore()
			got = d.EmittedReminders()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("reminders after the restore: %q, want %q", got, want)
			}
			d.End()
			if got := d.CommittedReminders(); len(got) != 2 {
				t.Fatalf("committed reminders: %q", got)
			}
			if got := d.CommittedBigOrders(); !slices.EqualFunc(got, []driver.Order{order("bob", 120, time.Second), order("alice", 100, 2*time.Second)}, sameOrder) {
				t.Fatalf("big orders: %v", got)
			}
		})
	}
}

// TestUnreadSideOutput: the side output first, which no node reads, is
// collected by the driver as a sink's records are: emitted at once,
// committed by a checkpoint, dropped by a restore and replayed.
func TestUnreadSideOutput(t *testing.T) {
	d := New(t)
	d.PushOrders(order("erin", 1, 0), order("erin", 2, time.Second))
	d.Checkpoint()
	d.PushOrders(order("frank", 3, 2*time.Second))
	if got := d.EmittedRemindFirst(); !slices.Equal(got, []string{"erin", "frank"}) {
		t.Fatalf("first = %q, want erin and frank", got)
	}
	if got := d.CommittedRemindFirst(); !slices.Equal(got, []string{"erin"}) {
		t.Fatalf("committed first = %q, want erin", got)
	}
	d.Restore()
	if got := d.EmittedRemindFirst(); !slices.Equal(got, []string{"erin", "frank"}) {
		t.Fatalf("first after the restore = %q, want erin and frank, once each", got)
	}
	d.End()
	if got := d.CommittedRemindFirst(); !slices.Equal(got, []string{"erin", "frank"}) {
		t.Fatalf("committed first at the end = %q", got)
	}
}

// TestLate: an order at or behind the watermark goes to the side output.
func TestLate(t *testing.T) {
	d := New(t)
	d.WatermarkOrders(t0.Add(time.Minute))
	d.PushOrders(order("carol", 5, 30*time.Second), order("carol", 6, 2*time.Minute))
	if got := d.EmittedLate(); !slices.EqualFunc(got, []driver.Order{order("carol", 5, 30*time.Second)}, sameOrder) {
		t.Fatalf("late: %v", got)
	}
	if got := d.CommittedLate(); len(got) != 0 {
		t.Fatalf("late committed before any checkpoint: %v", got)
	}
	d.End()
	if got := d.CommittedLate(); len(got) != 1 {
		t.Fatalf("late committed at the end: %v", got)
	}
	// Processing-time timers still due at the end do not run.
	if got := d.CommittedReminders(); len(got) != 0 {
		t.Fatalf("reminders: %q", got)
	}
}

// TestParallelism: at parallelism 3 the orders spread over the source's
// subtasks and every customer still gets one reminder, also when the job
// is restored at parallelism 2 and 1 (the state and the timers go to the
// new subtasks by key group).
func TestParallelism(t *testing.T) {
	for _, backend := range []string{"memory", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			d := New(t, runtime.DriverOptions{Parallelism: 3, StateBackend: backend})
			want := map[string]string{}
			for i := range 30 {
				c := string(rune('a' + i%5))
				d.PushOrders(order(c, i, time.Duration(i)*time.Second))
			}
			for i := range 5 {
				c := string(rune('a' + i))
				want[c] = fmt.Sprintf("%s: 6 orders, %d (processing time timer)", c, 6*i+75)
			}
			d.AdvanceWatermark(t0.Add(time.Hour))
			d.Checkpoint()
			d.PushOrders(order("f", 1, time.Hour+time.Second)) // after the checkpoint: replayed
			d.Rescale(2)
			want["f"] = "f: 1 orders, 1 (processing time timer)"
			d.Checkpoint()
			d.Rescale(1)
			d.AdvanceProcessingTime(2 * driver.RemindAfter)
			d.End()
			got := map[string]string{}
			for _, r := range d.CommittedReminders() {
				c := r[:1]
				if _, dup := got[c]; dup {
					t.Errorf("two reminders of %s: %q", c, d.CommittedReminders())
				}
				got[c] = r
			}
			if !maps.Equal(got, want) {
				t.Fatalf("reminders:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// fatalT is a testing.TB whose Fatalf records the message and ends the
// goroutine, as testing's does, for a test of a test that fails.
type fatalT struct {
	testing.TB
	msg      string
	cleanups []func()
}

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	goruntime.Goexit()
}
func (f *fatalT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

// TestPanic: a panic in a user function fails the test with the record
// that caused it, instead of hanging it, and the job's goroutines end.
func TestPanic(t *testing.T) {
	ft := &fatalT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d := New(ft)
		d.PushOrders(order("dave", 5, 0))
		d.PushOrders(order("dave", -1, time.Second))
		t.Error("the driver went on after the panic")
	}()
	<-done
	for _, fn := range ft.cleanups {
		fn()
	}
	for _, want := range []string{"the job failed", "negative amount", "dave", "-1"} {
		if !strings.Contains(ft.msg, want) {
			t.Errorf("the failure %q does not say %q", ft.msg, want)
		}
	}
}

func sameOrder(a, b driver.Order) bool {
	return a.Customer == b.Customer && a.Amount == b.Amount && a.At.Equal(b.At)
}

// TestAfterEnd: a command after End fails the test, and says why.
func TestAfterEnd(t *testing.T) {
	ft := &fatalT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d := New(ft)
		d.End()
		d.PushOrders(order("gina", 1, 0))
		t.Error("the driver took a record after End")
	}()
	<-done
	for _, fn := range ft.cleanups {
		fn()
	}
	if !strings.Contains(ft.msg, "the job has ended") {
		t.Errorf("the failure %q does not say that the job has ended", ft.msg)
	}
}
