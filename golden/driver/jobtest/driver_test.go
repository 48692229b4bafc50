package jobtest

import (
	"slices"
	"testing"
	"time"

	"github.com/pipegen/pipegen/golden/driver"
	"github.com/pipegen/pipegen/runtime"
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
// subtasks and every customer still gets one reminder.
func TestParallelism(t *testing.T) {
	d := New(t, runtime.DriverOptions{Parallelism: 3})
	for i := range 30 {
		d.PushOrders(order(string(rune('a'+i%5)), i, time.Duration(i)*time.Second))
	}
	d.AdvanceWatermark(t0.Add(time.Hour))
	d.Checkpoint()
	d.Restore()
	d.AdvanceProcessingTime(2 * driver.RemindAfter)
	d.End()
	got := d.CommittedReminders()
	if len(got) != 5 {
		t.Fatalf("reminders: %q, want one per customer", got)
	}
}

func sameOrder(a, b driver.Order) bool {
	return a.Customer == b.Customer && a.Amount == b.Amount && a.At.Equal(b.At)
}
