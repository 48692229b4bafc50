package generator

import (
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// readAhead reads s's runs until TakeRun returns none, or for at most
// 4*MaxBlock numbers (a subtask that never stops), and returns the
// sequence numbers read.
func readAhead(s *Source[uint64]) []uint64 {
	var got []uint64
	for len(got) < 4*MaxBlock {
		seq, n := s.TakeRun()
		if n == 0 {
			return got
		}
		for i := range n {
			s.At(seq + i)
			if _, ok := s.fn(seq + i); !ok {
				s.TookRun(i)
				s.NoRecord()
				return got
			}
			got = append(got, seq+i)
		}
		s.TookRun(n)
	}
	return got
}

// TestGeneratorSubtasksKeepPace reads one subtask of two alone: it stops
// (TakeRun returns no run, not done) once it is paceLead rounds ahead of
// the other, and goes on by a round when the other does.
func TestGeneratorSubtasksKeepPace(t *testing.T) {
	env := &connectortest.SharedEnv{Env: generatorJob(t, 2, "")}
	s0 := NewSource(env, 0, 0, upTo(1<<40))
	s1 := NewSource(env, 0, 1, upTo(1<<40))
	// Rounds 0, 1, ... have blocks of 1, 2, 4, ... numbers.
	got := readAhead(s1)
	if s1.round != paceLead+1 || len(got) != 1<<(paceLead+1)-1 || s1.Done() {
		t.Fatalf("subtask 1 alone read %d numbers and stopped in round %d (done %v); want %d, in round %d, not done",
			len(got), s1.round, s1.Done(), 1<<(paceLead+1)-1, paceLead+1)
	}
	if more := readAhead(s1); len(more) > 0 {
		t.Fatalf("subtask 1 read %d more numbers while subtask 0 stood still", len(more))
	}
	// Subtask 0 catches up and goes on until it is as far ahead of
	// subtask 1; then subtask 1 may go on as far again.
	readAhead(s0)
	if s0.round != s1.round+paceLead+1 {
		t.Fatalf("subtask 0 stopped in round %d, subtask 1 is in round %d: want it %d rounds ahead", s0.round, s1.round, paceLead+1)
	}
	before := s1.round
	if more := readAhead(s1); len(more) == 0 || s1.round != s0.round+paceLead+1 {
		t.Errorf("subtask 1 went from round %d to %d (%d numbers) with subtask 0 in round %d: want it to round %d",
			before, s1.round, len(more), s0.round, s0.round+paceLead+1)
	}
}

// TestGeneratorEndedSubtaskHoldsNoOneBack reads two subtasks in turn to
// the end of a short input: they give every number once, and once one
// has ended the other reads to its end at one go.
func TestGeneratorEndedSubtaskHoldsNoOneBack(t *testing.T) {
	const n = 3*MaxBlock + 5
	env := &connectortest.SharedEnv{Env: generatorJob(t, 2, "")}
	subs := []*Source[uint64]{NewSource(env, 0, 0, upTo(n)), NewSource(env, 0, 1, upTo(n))}
	var all []uint64
	for turn := 0; !subs[0].Done() || !subs[1].Done(); turn++ {
		if turn > 1000 {
			t.Fatalf("not done after %d turns: %d numbers read", turn, len(all))
		}
		for i, s := range subs {
			if s.Done() {
				continue
			}
			all = append(all, readAhead(s)...)
			if s.Done() && !subs[1-i].Done() {
				// The other reads the rest of its numbers at one go.
				all = append(all, readAhead(subs[1-i])...)
				if !subs[1-i].Done() {
					t.Fatalf("subtask %d ended, and subtask %d still stops before its end (round %d)", i, 1-i, subs[1-i].round)
				}
			}
		}
	}
	slices.Sort(all)
	for i, seq := range all {
		if seq != uint64(i) {
			t.Fatalf("%d numbers read, number %d is %d: want each of 0-%d once", len(all), i, seq, n-1)
		}
	}
	if len(all) != n {
		t.Fatalf("%d numbers read, want %d", len(all), n)
	}
}

// TestGeneratorEndedSubtaskReleases ends one subtask early (its
// function ends): the other then reads on without waiting for it.
func TestGeneratorEndedSubtaskReleases(t *testing.T) {
	env := &connectortest.SharedEnv{Env: generatorJob(t, 2, "")}
	s0 := NewSource(env, 0, 0, upTo(40))
	s1 := NewSource(env, 0, 1, upTo(1<<40))
	for turn := 0; !s0.Done(); turn++ {
		if turn > 100 {
			t.Fatalf("subtask 0 not done after %d turns, in round %d", turn, s0.round)
		}
		readAhead(s0)
		readAhead(s1)
	}
	if got := readAhead(s1); len(got) != 4*MaxBlock {
		t.Errorf("with subtask 0 ended in round %d, subtask 1 read %d numbers and stopped in round %d: want it on without waiting", s0.round, len(got), s1.round)
	}
}

// TestGeneratorWithoutSharerDoesNotWait checks that subtasks read one
// after another in a test Env (no connector.Sharer), as the other tests
// here do, never wait for each other.
func TestGeneratorWithoutSharerDoesNotWait(t *testing.T) {
	env := generatorJob(t, 2, "")
	s1 := NewSource(env, 0, 1, upTo(3*MaxBlock))
	if got := readAhead(s1); !s1.Done() || len(got) == 0 {
		t.Fatalf("subtask 1 read %d numbers and stopped (done %v): want it to its end", len(got), s1.Done())
	}
}

// TestGeneratorDrainWhileInPace drains the job while a subtask waits in
// pace for the other: the waiting subtask sees the drain at its next look
// and is done, the other stops within connector.CountEvery records, and
// every record either subtask read is counted (a `stop --drain` reports the
// count): no subtask is left waiting for one that drains.
func TestGeneratorDrainWhileInPace(t *testing.T) {
	env := &connectortest.SharedEnv{Env: generatorJob(t, 2, "")}
	defer env.Cancel(fault.ErrCanceled)
	s0 := NewSource(env, 0, 0, upTo(1<<40))
	s1 := NewSource(env, 0, 1, upTo(1<<40))
	read := len(readAhead(s1))
	if _, n := s1.TakeRun(); n != 0 || s1.Done() {
		t.Fatalf("subtask 1 alone: a run of %d numbers (done %v), want it waiting for subtask 0", n, s1.Done())
	}
	env.Ckpt().RequestSavepoint(t.TempDir(), true, true)
	if more := readAhead(s1); len(more) > 0 || !s1.Done() || !s1.drained {
		t.Fatalf("subtask 1, waiting when the job drained: %d more numbers, done %v, drained %v; want none, done and drained", len(more), s1.Done(), s1.drained)
	}
	got := readAhead(s0)
	if len(got) > connector.CountEvery || !s0.Done() || !s0.drained {
		t.Fatalf("subtask 0 after the drain: %d numbers, done %v, drained %v; want at most %d, done and drained", len(got), s0.Done(), s0.drained, connector.CountEvery)
	}
	if more := readAhead(s0); len(more) > 0 {
		t.Fatalf("subtask 0 read %d numbers after it had seen the drain", len(more))
	}
	read += len(got)
	if counted := env.Ckpt().RecordsRead(); counted != int64(read) {
		t.Errorf("%d records counted, %d read", counted, read)
	}
}
