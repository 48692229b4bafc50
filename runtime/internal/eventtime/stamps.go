package eventtime

import (
	"fmt"
	"os"
	"strconv"
)

// The stamps of tumbling and sliding windows (pane.vers): a byte a window.
//
// A delta writes the windows that got records after its base's epoch, so
// each window keeps the epoch of its last record, set when a record finds
// it stamped with another (entryIn, stamp; Acc reads it). Held as the
// epoch's low 32 bits, the stamps took 4 of the 32 bytes a window of
// Nexmark q5's integer keys and counts takes. A byte: q5's peak memory
// with exactly-once checkpoints every second fell from 95 to 85 MiB
// (100M events, nine checkpoints) and from 117 to 104 (20M). Its CPU did
// not change (1.003 and 0.999, paired runs), though a fifth of entryIn's
// samples were on the stamp's load (perf annotate).
//
// A stamp is the epoch less the state's stampBase, 1 to stampSpan; 0
// says the window got no record after stampBase (or none since changes
// are tracked). When the epoch would be past what a byte holds, the base
// moves on by half the span (rebase): every stamp goes down by as much,
// those older than the new base to 0. That is a pass over the stamps of
// every pane once every stampSpan/2 checkpoints. A delta whose base is
// older than stampBase cannot tell which windows with stamp 0 changed
// after it, and writes every window of the panes that changed since it
// (stampedAfter), as a full file would: a base that old is one that
// checkpoints have failed to replace for over a hundred epochs.

// stampSpan is the highest stamp, the epochs after stampBase a byte
// holds.
const stampSpan = 255

// curStamp is the stamp of the current epoch, 1 to the span.
func (s *WindowState[K, A]) curStamp() uint8 { return uint8(s.epoch - s.stampBase) }

// rebaseIfPast moves the base on when the epoch, which just changed, is
// past what a stamp holds (rebase).
func (s *WindowState[K, A]) rebaseIfPast() {
	if span := s.span(); s.epoch-s.stampBase > span {
		s.rebase(s.epoch - span/2 - 1)
	}
}

// SpanVar names the environment variable that sets the highest stamp
// of every window state of the process, 1 to stampSpan, for pipegen's
// own crash tests: a program killed after a few checkpoints has then
// rebased its stamps, which at stampSpan takes over a hundred.
const SpanVar = "PIPEGEN_TEST_STAMP_SPAN"

// envSpan is SpanVar's value, 0 when it is not set.
var envSpan = spanFromEnv(os.Getenv(SpanVar))

// spanFromEnv parses SpanVar's value v. A value out of range stops the
// program: a test that sets it would otherwise prove nothing, silently.
func spanFromEnv(v string) uint64 {
	if v == "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 8)
	if err != nil || n == 0 {
		panic(fmt.Sprintf("%s=%q: want a whole number from 1 to %d (a setting of pipegen's own tests; unset it)", SpanVar, v, stampSpan))
	}
	return n
}

// RebaseLogVar names the environment variable of a file that every
// rebase of the process appends a line to (the process id and the new
// base), for pipegen's own crash tests: with SpanVar they check that the
// processes they run and kill did rebase, which the output cannot show.
const RebaseLogVar = "PIPEGEN_TEST_STAMP_LOG"

// rebaseLog is RebaseLogVar's value, "" when it is not set.
var rebaseLog = os.Getenv(RebaseLogVar)

// logRebase appends the line of a rebase to base to the file path: one
// write with O_APPEND, so that processes sharing the file do not mix
// their lines. A line that cannot be written stops the program, as a bad
// SpanVar does: the test would otherwise check a log that lies.
func logRebase(path string, base uint64) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.Write(fmt.Appendf(nil, "%d %d\n", os.Getpid(), base))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		panic(fmt.Sprintf("%s: %v (a setting of pipegen's own tests; unset it)", RebaseLogVar, err))
	}
}

// span is stampSpan, or less in tests (testSpan, SpanVar) that want
// rebases often.
func (s *WindowState[K, A]) span() uint64 {
	if s.testSpan > 0 {
		return s.testSpan
	}
	return stampSpan
}

// rebase moves stampBase on to base: every window's stamp becomes its
// epoch less base, 0 when the epoch is base or before. A pane that a
// capture may still read (shared) gets arrays of its own first.
func (s *WindowState[K, A]) rebase(base uint64) {
	by := base - s.stampBase
	for p := range s.allPanes() {
		if len(p.vers) == 0 {
			continue
		}
		if p.shared {
			p.own()
		}
		for i, v := range p.vers {
			if uint64(v) > by {
				p.vers[i] = v - uint8(by)
			} else {
				p.vers[i] = 0
			}
		}
	}
	s.stampBase = base
	if rebaseLog != "" {
		logRebase(rebaseLog, base)
	}
}

// stampedAfter reports whether a window with stamp v, over base,
// changed after epoch since: when since is before base, a window stamped
// 0 may have, and every window counts as changed.
func stampedAfter(v uint8, base, since uint64) bool {
	return since < base || v != 0 && base+uint64(v) > since
}
