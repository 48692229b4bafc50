package cli

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// TestHeapFloor checks that the floor raises the collector's heap goal,
// and that GOGC or GOMEMLIMIT in the environment turns it off.
func TestHeapFloor(t *testing.T) {
	defer func() { floor = nil }()
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			floor = nil
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(env, "100")
			keepHeapFloor()
			if floor != nil {
				t.Fatalf("with %s set, the floor took %d bytes", env, len(floor))
			}
		})
	}
	floor = nil
	before := heapGoal()
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	collections := readMetric("/gc/cycles/total:gc-cycles")
	keepHeapFloor()
	if len(floor) != floorSize {
		t.Fatalf("floor of %d bytes, want %d", len(floor), floorSize)
	}
	// A collection that the floor started would end within milliseconds;
	// the metric counts those that ended.
	time.Sleep(100 * time.Millisecond)
	if n := readMetric("/gc/cycles/total:gc-cycles") - collections; n != 0 {
		t.Errorf("setting the floor aside ran %d collections, want none", n)
	}
	if got := readMetric("/gc/gogc:percent"); got != startGOGC {
		t.Errorf("GOGC %d until the first collection, want %d", got, startGOGC)
	}
	// After a collection the percentage is Go's again (the cleanup runs
	// soon after it, on a goroutine of its own).
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); readMetric("/gc/gogc:percent") != 100; {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %d after a collection, want 100", readMetric("/gc/gogc:percent"))
		}
		time.Sleep(time.Millisecond)
		runtime.GC()
	}
	after := heapGoal()
	if after < before+floorSize {
		t.Errorf("heap goal %d bytes with the floor, %d without: want %d more at least", after, before, floorSize)
	}
	if after > 3*(before+floorSize) {
		t.Errorf("heap goal %d bytes with the floor, %d without: GOGC is not 100", after, before)
	}
}

// readMetric reads one of runtime/metrics' integer metrics.
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heapGoal is the collector's heap goal after a collection.
func heapGoal() uint64 {
	runtime.GC()
	return readMetric("/gc/heap/goal:bytes")
}
