package cli

import (
	"runtime"
	"runtime/metrics"
	"testing"
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
	keepHeapFloor()
	if len(floor) != floorSize {
		t.Fatalf("floor of %d bytes, want %d", len(floor), floorSize)
	}
	if after := heapGoal(); after < before+floorSize {
		t.Errorf("heap goal %d bytes with the floor, %d without: want %d more at least", after, before, floorSize)
	}
}

// heapGoal is the collector's heap goal after a collection.
func heapGoal() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
