package eventtime

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStampsAcrossRebases changes windows of one pane at random over 700
// epochs, with the stamps' span of production and with small ones (a
// rebase every epoch or few), and checks after each epoch, for every
// earlier epoch as a delta's base, that a window's stamp says it changed
// after the base exactly when it did, or that every window counts as
// changed when the base is older than the stamps' (stampedAfter).
func TestStampsAcrossRebases(t *testing.T) {
	t.Parallel()
	for _, span := range []uint64{0, 1, 2, 3, 7} {
		rng := rand.New(rand.NewPCG(span, 5))
		s := NewWindowState[int, flatAcc](WindowAssigner{Kind: Tumbling, Size: 1 << 40}, 0, nil)
		s.testSpan = span
		s.Track()
		const keys = 40
		last := make(map[int]uint64) // key -> the epoch of its last record
		epochs, rebases := 700, 0
		for range epochs {
			for k := range keys {
				if rng.IntN(4) == 0 {
					s.Add(k, 1, MinTime, func(a *flatAcc) { a.add(k) }, nil)
					last[k] = s.Epoch()
				}
			}
			base := s.stampBase
			s.closeEpoch()
			if s.stampBase != base {
				rebases++
			}
			p := s.panes[0]
			for since := range s.Epoch() {
				for i, k := range p.keys {
					got := stampedAfter(p.vers[i], s.stampBase, since)
					want := last[k] > since || since < s.stampBase
					if got != want {
						t.Fatalf("span %d, epoch %d: key %d last changed in epoch %d, stamp %d over base %d: changed after epoch %d: %v, want %v",
							span, s.Epoch(), k, last[k], p.vers[i], s.stampBase, since, got, want)
					}
				}
			}
		}
		if rebases < epochs/int(s.span()+1) {
			t.Errorf("span %d: %d rebases in %d epochs", s.span(), rebases, epochs)
		}
	}
}

// TestWindowsDeltaChainsAcrossRebases is TestWindowsDeltaChains and
// TestWindowJoinDeltaChains with stamps that rebase every epoch or few:
// deltas on a base older than the stamps' write every window of the
// panes that changed, and a restore of them must still be the run
// without checkpoints.
func TestWindowsDeltaChainsAcrossRebases(t *testing.T) {
	t.Parallel()
	for _, join := range []bool{false, true} {
		for _, kind := range []WindowKind{Tumbling, Sliding} {
			for _, span := range []uint64{1, 2, 5} {
				crashes := 0
				for seed := range seeds(30) {
					rng := rand.New(rand.NewPCG(seed, 51+uint64(kind)))
					a := randomAssigner(rng, kind)
					lateness := randomLateness(rng)
					ops := genStream(rng, 100+rng.IntN(300))
					name := fmt.Sprintf("join %v %v size=%d slide=%d lateness=%d span %d seed %d", join, kind, a.Size, a.Slide, lateness, span, seed)
					crashes += checkDeltaChains(t, name, rng, ops, func() deltaEngine {
						if join {
							j := NewWindowJoin[int, int, int](a, lateness)
							j.ws.testSpan = span
							return &windowJoinEngine{j}
						}
						s := newTestWindowState(a, lateness)
						s.testSpan = span
						return &windowEngine{s: s}
					})
				}
				if crashes == 0 {
					t.Errorf("join %v, %v, span %d: no run crashed and restored", join, kind, span)
				}
			}
		}
	}
}

// TestWindowCaptureAcrossRebases is TestWindowCaptureCopiesOnWrite with
// stamps that rebase every epoch or few: a rebase rewrites the stamps
// after a capture, which must still encode what the barrier saw.
func TestWindowCaptureAcrossRebases(t *testing.T) {
	t.Parallel()
	for _, kind := range []WindowKind{Tumbling, Sliding} {
		for _, span := range []uint64{1, 2, 5} {
			captures := 0
			for seed := range seeds(40) {
				rng := rand.New(rand.NewPCG(seed, 61+uint64(kind)))
				a := randomAssigner(rng, kind)
				lateness := randomLateness(rng)
				captures += captureTwins(t, fmt.Sprintf("%v size=%d slide=%d lateness=%d span %d seed %d", kind, a.Size, a.Slide, lateness, span, seed), rng, a, lateness, span)
			}
			if captures == 0 {
				t.Errorf("%v span %d: nothing captured", kind, span)
			}
		}
	}
}

// TestSpanFromEnv: SpanVar's value is the span of every new window
// state, and a value a byte's stamps cannot hold is refused.
func TestSpanFromEnv(t *testing.T) {
	for v, want := range map[string]uint64{"": 0, "1": 1, "7": 7, "255": 255} {
		if got := spanFromEnv(v); got != want {
			t.Errorf("spanFromEnv(%q) = %d, want %d", v, got, want)
		}
	}
	for _, v := range []string{"0", "256", "-1", "three"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("spanFromEnv(%q) did not refuse it", v)
				}
			}()
			spanFromEnv(v)
		}()
	}
	saved := envSpan
	defer func() { envSpan = saved }()
	envSpan = 3
	if s := NewWindowState[int, flatAcc](WindowAssigner{Kind: Tumbling, Size: 10}, 0, nil); s.span() != 3 {
		t.Errorf("a new state's span is %d with %s=3", s.span(), SpanVar)
	}
}

// TestRebaseLog: with RebaseLogVar set, every rebase appends the process
// id and the new base to the file, and a file that cannot be written
// stops the program.
func TestRebaseLog(t *testing.T) {
	saved := rebaseLog
	defer func() { rebaseLog = saved }()
	rebaseLog = filepath.Join(t.TempDir(), "rebases")
	s := NewWindowState[int, flatAcc](WindowAssigner{Kind: Tumbling, Size: 10}, 0, nil)
	s.testSpan = 4
	for epoch := uint64(1); epoch <= 9; epoch++ {
		s.epoch = epoch
		s.rebaseIfPast()
	}
	data, err := os.ReadFile(rebaseLog)
	if err != nil {
		t.Fatal(err)
	}
	// Span 4: once the epoch is 5 past the base, the base moves to 3
	// before the epoch.
	want := fmt.Sprintf("%[1]d 2\n%[1]d 4\n%[1]d 6\n", os.Getpid())
	if string(data) != want {
		t.Errorf("the log holds %q, want %q", data, want)
	}

	rebaseLog = filepath.Join(t.TempDir(), "missing", "rebases")
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), RebaseLogVar) {
			t.Errorf("a log that cannot be written: recover() = %v, want a panic naming %s", r, RebaseLogVar)
		}
	}()
	s.epoch++
	s.epoch++
	s.rebaseIfPast()
}
