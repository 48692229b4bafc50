package eventtime

import (
	"fmt"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

// Incremental checkpoints of tumbling and sliding windows (changes.go).

// Incremental reports whether SnapshotDelta can write deltas of the
// windows: tumbling and sliding ones, not sessions (whose merges change
// windows of a key that got no record).
func (s *WindowState[K, A]) Incremental() bool { return s.assign.Kind != Session }

// SnapshotDelta writes the windows as d says: every open one (as Snapshot
// does), or the windows that got records after epoch d.Since. It ends the
// epoch and returns it: a delta on top of this snapshot passes it as
// Since. Windows that fired or were dropped since are not written: the
// watermark in the sections' headers says which (restoreDelta). It fails
// for sessions (Incremental) unless d is full. It encodes on the calling
// goroutine; Capture leaves the encoding to another.
func (s *WindowState[K, A]) SnapshotDelta(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encA func(*codec.Writer, *A), d Delta) (uint64, error) {
	if d.Full {
		if err := s.Snapshot(sec, keyGroup, encK, encA); err != nil {
			return 0, err
		}
		return s.closeEpoch(), nil
	}
	if !s.Incremental() {
		return 0, fmt.Errorf("session windows cannot be written as a delta")
	}
	c := s.capture(d, false)
	if err := c.Encode(sec, keyGroup, encK, encA); err != nil {
		return 0, err
	}
	return s.closeEpoch(), nil
}

// closeEpoch ends the current epoch and returns it; changes are stamped
// from now on.
func (s *WindowState[K, A]) closeEpoch() uint64 {
	e := s.Epoch()
	s.epoch = e + 1
	s.Track()
	s.rebaseIfPast()
	return e
}

// Epoch is the epoch the next SnapshotDelta ends.
func (s *WindowState[K, A]) Epoch() uint64 { return max(s.epoch, 1) }

// Track makes the state list its changes from now on: a delta may be
// taken on top of the files it was restored from.
func (s *WindowState[K, A]) Track() {
	if s.tracking {
		return
	}
	s.tracking = true
	// The windows so far have not changed since any epoch (stamp 0):
	// their panes get stamps from now on.
	for p := range s.allPanes() {
		p.vers = make([]uint8, len(p.keys), cap(p.keys))
	}
}

// RestoreSection adds the windows of one key group's section of a full
// file, or applies a delta's (delta set) on top of the files before it.
// The files of one subtask of the checkpoint (a chain: a full file and
// the deltas on top of it) come one after the other, each chain ended by
// EndChain. The first chain is restored into s itself; later ones (after
// a change of parallelism) each into a state of their own, merged into s
// at EndChain, because a delta's watermark fires and drops the windows of
// its own subtask only.
func (s *WindowState[K, A]) RestoreSection(section []byte, delta bool, decK func(*codec.Reader) K, decA func(*codec.Reader) *A) error {
	if !s.inChain {
		s.inChain = true
		if s.restored || s.n > 0 {
			s.chain = NewWindowState[K](s.assign, s.lateness, s.merge)
			if s.sliced {
				s.chain.slice()
			}
		}
	}
	into := s
	if s.chain != nil {
		into = s.chain
	}
	if !delta {
		_, err := into.restore(section, decK, decA, nil)
		return err
	}
	return into.restoreDelta(section, decK, decA)
}

// EndChain ends the files of one subtask of the checkpoint being
// restored (RestoreSection).
func (s *WindowState[K, A]) EndChain() error {
	s.inChain = false
	c := s.chain
	if c == nil {
		if s.sliced {
			s.chainRestored(nil)
		}
		return nil
	}
	s.chain = nil
	if !c.restored {
		return nil
	}
	if s.sliced {
		s.chainRestored(c)
		return s.mergeChain(c)
	}
	s.wm = restoredWatermark(s.wm, !s.restored, c.wm)
	s.restored = true
	s.seq = max(s.seq, c.seq)
	// The windows go in as the chain's files had them, pane by pane in
	// ascending start, each pane's keys in creation order: windows of
	// equal creation numbers that several subtasks created fire in the
	// same order at every restore.
	starts := make([]int64, 0, len(c.panes))
	for start := range c.panes {
		starts = append(starts, start)
	}
	slices.Sort(starts)
	for _, start := range starts {
		p := c.panes[start]
		c.sortPane(p)
		for i, k := range p.keys {
			if _, _, err := s.restorePane(k, p.w, p.seqs.at(i), p.fired || p.early[int32(i)], &p.accs[i]); err != nil {
				return err
			}
			s.n++
		}
	}
	for k, wins := range c.sessions {
		for _, e := range wins {
			if _, err := s.restoreSession(k, e.w, e.seq, e.fired, &e.acc); err != nil {
				return err
			}
			s.n++
		}
	}
	return nil
}

// restoreDelta applies a delta's section: the windows that its watermark
// has passed fire (without output: they fired before the checkpoint) or
// are dropped, then its windows replace the ones of their keys.
func (s *WindowState[K, A]) restoreDelta(section []byte, decK func(*codec.Reader) K, decA func(*codec.Reader) *A) error {
	if !s.Incremental() {
		return fmt.Errorf("%w: a delta of session windows", codec.ErrCorrupt)
	}
	r := codec.NewReader(section)
	h, ok := readSectionHeader(r)
	if !ok {
		return r.Err()
	}
	if err := s.layoutFits(h); err != nil {
		return err
	}
	s.restored = true
	s.seq = max(s.seq, h.seq)
	s.Advance(h.wm, nil)
	s.sl.sectionFired = h.fired
	return readWindows(r, h, true, decK, decA, func(k K, w Window, seq uint64, fired bool, a *A) error {
		if s.sliced {
			return s.restoreSliced(k, w, seq, a, h.markHolds(fired))
		}
		if err := s.fits(w); err != nil {
			return fmt.Errorf("%w: window %v of key %v: %w", codec.ErrCorrupt, w, k, err)
		}
		if a == nil {
			a = new(A)
		}
		s.seq = max(s.seq, seq+1)
		if p := s.panes[w.Start]; p != nil {
			if i, ok := s.indexOf(p, k); ok {
				if p.shared {
					p.own()
				}
				p.accs[i] = *a
				if fired && !p.fired {
					if p.early == nil {
						p.early = make(map[int32]bool)
					}
					p.early[i] = true
				}
				return nil
			}
		}
		if _, _, err := s.restorePane(k, w, seq, fired, a); err != nil {
			return err
		}
		s.n++
		return nil
	})
}

// Windows calls yield for every open window of every key, with its
// creation number, whether it fired, and its accumulator (valid until the
// next change of s), until yield returns false.
func (s *WindowState[K, A]) Windows(yield func(k K, w Window, seq uint64, fired bool, acc *A) bool) {
	for _, p := range s.panes {
		for i, k := range p.keys {
			if !yield(k, p.w, p.seqs.at(i), p.fired || p.early[int32(i)], &p.accs[i]) {
				return
			}
		}
	}
	for k, wins := range s.sessions {
		for _, e := range wins {
			if !yield(k, e.w, e.seq, e.fired, &e.acc) {
				return
			}
		}
	}
}

// Seq is the creation number of the next window.
func (s *WindowState[K, A]) Seq() uint64 { return s.seq }
