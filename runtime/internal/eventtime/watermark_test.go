package eventtime

import (
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
)

// TestManualWatermarks: a generator that a test driver sets sends the
// watermark it was set to, once, from Pending, and none from the records
// (however many) or from idleness; Finish still ends event time, and a
// restored generator sends only what is set after.
func TestManualWatermarks(t *testing.T) {
	g := NewWatermarks(config.WatermarkConfig{MaxOutOfOrderness: time.Second, IdleTimeout: time.Millisecond})
	g.Manual()
	for i := range 3 * watermarkEvery {
		if w, ok := g.Observe(int64(10_000 + i)); ok {
			t.Fatalf("record %d sent watermark %d: a driven source sends only what the driver sets", i, w)
		}
	}
	if w, ok := g.Pending(); ok {
		t.Fatalf("Pending sent %d before the driver set one", w)
	}
	g.Set(500)
	if w, ok := g.Pending(); !ok || w != 500 {
		t.Fatalf("Pending = %d, %v after Set(500); want 500", w, ok)
	}
	if w, ok := g.Pending(); ok {
		t.Fatalf("Pending sent %d again", w)
	}
	g.Set(400) // behind: nothing
	if w, ok := g.Pending(); ok {
		t.Fatalf("Pending sent %d after a Set behind the last", w)
	}
	if g.Idle(time.Now().Add(time.Hour)) {
		t.Fatal("a driven source went idle")
	}
	saved := g.Encode()
	if w, ok := g.Finish(); !ok || w != MaxTime {
		t.Fatalf("Finish = %d, %v", w, ok)
	}
	r := NewWatermarks(config.WatermarkConfig{})
	if err := r.Decode(saved); err != nil {
		t.Fatal(err)
	}
	r.Manual()
	r.Set(500)
	if w, ok := r.Pending(); ok {
		t.Fatalf("the restored generator sent %d again", w)
	}
	r.Set(600)
	if w, ok := r.Pending(); !ok || w != 600 {
		t.Fatalf("restored: Pending = %d, %v after Set(600)", w, ok)
	}
}

// TestDecodeLowest checks that a generator restored from several (a source
// that ran at another parallelism) is behind each of them.
func TestDecodeLowest(t *testing.T) {
	var states [][]byte
	for _, ts := range []int64{5000, 1000, 9000} {
		g := NewWatermarks(config.WatermarkConfig{})
		for range watermarkEvery {
			g.Observe(ts)
		}
		states = append(states, g.Encode())
	}
	r := NewWatermarks(config.WatermarkConfig{})
	if err := r.DecodeLowest(states); err != nil {
		t.Fatal(err)
	}
	if r.maxTS != 1000 || r.emitted != 1000-1 {
		t.Errorf("restored maxTS %d, emitted %d: want 1000 and 999, the lowest", r.maxTS, r.emitted)
	}
	// A record at 2000, after the old watermarks of the others, is not
	// behind the restored generator's watermark.
	for range watermarkEvery {
		if w, ok := r.Observe(2000); ok && w >= 2000 {
			t.Fatalf("watermark %d after a record at 2000", w)
		}
	}
}
