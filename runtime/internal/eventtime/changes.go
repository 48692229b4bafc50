package eventtime

import "github.com/pipegen/pipegen/runtime/state"

// Incremental checkpoints of timers and windows (memory backend).
//
// A checkpoint of a TimerService or of a WindowState of tumbling or
// sliding windows may be a delta: only what changed since an earlier
// checkpoint, which it builds on (package checkpoint keeps the chain of
// files). Changes are counted per epoch, the time between two barriers,
// as state.Memory counts them. The first change in an epoch of a timer
// appends it to the epoch's list, and a delta writes the entries listed
// in the epochs after the one its base closed. A window is stamped with
// the epoch of its last record instead (pane.vers, stamps.go), and a
// delta writes the windows stamped after its base's epoch: it reads the
// panes with such windows (pane.ver), not a list, so that the windows
// can be captured at the barrier and encoded later (windowcapture.go).
// What a delta writes is proportional to what changed, not to the state.
//
// A delta section has the header of a full one (the watermark and the
// next sequence number at the barrier), then one nested entry per change,
// its operation first (deltaPut, deltaDelete), then the fields of a full
// entry (a delete of a timer: its key, time, domain and registration
// number); a delta of windows is written in the layout of a full file
// (layoutPanes, windowformat.go), every window a put. Windows are never
// deleted one by one in a delta: a window fires when the watermark
// reaches its MaxTimestamp and is dropped when it reaches its cleanup
// time, so the watermark in the delta's header says which windows of its
// base have fired or gone (WindowState.restoreDelta applies it before the
// entries).

// Delta says what a snapshot writes: every entry (Full), or the changes
// after epoch Since (state.Delta).
type Delta = state.Delta

// The operations of a delta's entries.
const (
	deltaPut    = 0
	deltaDelete = 1
)

// changeLog lists the changes of timers (TimerService) in each epoch,
// from the first capture (or from a restore that a delta may build on)
// on.
type changeLog[K comparable] struct {
	// epoch is the current epoch; it starts at 1.
	epoch    uint64
	tracking bool
	cur      []timerChange[K]
	pending  []epochChanges[K]
	// voids counts the places of cur whose change was taken off it
	// (unlist).
	voids int
}

type epochChanges[K comparable] struct {
	epoch uint64
	items []timerChange[K]
}

// add lists x as changed in the current epoch and returns 1 + its place
// in the epoch's list, or 0 when changes are not listed yet.
func (l *changeLog[K]) add(x timerChange[K]) uint32 {
	if !l.tracking {
		return 0
	}
	l.cur = append(l.cur, x)
	return uint32(len(l.cur))
}

// unlist takes the change at place p of the current epoch's list off it,
// void in its place. Once most of the list is void it is compacted, the
// changes kept in their order (a timer deleted, then another at the same
// time of the same key registered, must restore in that order); moved
// gets each change that moved, with 1 + its new place.
func (l *changeLog[K]) unlist(p int, moved func(x *timerChange[K], listed uint32)) {
	l.cur[p] = timerChange[K]{void: true}
	l.voids++
	if l.voids <= 1024 || 2*l.voids <= len(l.cur) {
		return
	}
	n := 0
	for i := range l.cur {
		if l.cur[i].void {
			continue
		}
		if n != i {
			l.cur[n] = l.cur[i]
			moved(&l.cur[n], uint32(n)+1)
		}
		n++
	}
	clear(l.cur[n:])
	l.cur = l.cur[:n]
	l.voids = 0
}

// close ends the current epoch and returns it: yield gets every item
// listed after epoch d.Since (with the epoch it was listed in, oldest
// first) unless d is full, and the lists up to d.Keep are dropped.
func (l *changeLog[K]) close(d Delta, yield func(epoch uint64, x *timerChange[K]) error) (uint64, error) {
	if l.epoch == 0 {
		l.epoch = 1
	}
	if l.tracking {
		l.pending = append(l.pending, epochChanges[K]{l.epoch, l.cur})
	}
	// The next epoch lists about as many changes: growing the list from
	// nothing copied it over and over (q5 with exactly-once).
	l.cur = make([]timerChange[K], 0, len(l.cur)-l.voids)
	l.voids = 0
	var err error
	if !d.Full {
		for _, c := range l.pending {
			if c.epoch <= d.Since {
				continue
			}
			for i := range c.items {
				if err = yield(c.epoch, &c.items[i]); err != nil {
					break
				}
			}
		}
	}
	kept := l.pending[:0]
	for _, c := range l.pending {
		if c.epoch > d.Keep {
			kept = append(kept, c)
		}
	}
	clear(l.pending[len(kept):])
	l.pending = kept
	l.tracking = true
	e := l.epoch
	l.epoch++
	return e, err
}

// current is the epoch the next close ends.
func (l *changeLog[K]) current() uint64 { return max(l.epoch, 1) }
