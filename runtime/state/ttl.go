package state

import "time"

// State TTL (state-ttl on a reduce, aggregate or process node): a value,
// or an entry of a map state, expires ttl after its last write, in
// processing time, as Flink's state TTL does. An expired value is never
// returned: a read finds none (and deletes it, lazily); a sweep at every
// barrier deletes the expired ones among a share of the entries, so that
// every entry is looked at within some barriers; All leaves them out.
// The write times are part of the state (the generated codec's TTL is
// set): checkpoints keep them, as a varint of Unix milliseconds before
// each value, and restores bring them back.

// clock is the processing time in Unix milliseconds that state TTL reads:
// the one place it is read (tests set it with SetClock).
var clock = func() int64 { return time.Now().UnixMilli() }

// nowMillis is the processing time of s's TTL: its job's clock (SetClock)
// or the package's.
func (s *Memory[K, V]) nowMillis() int64 {
	if s.now != nil {
		return s.now()
	}
	return clock()
}

// SetClock makes now the processing time of s's TTL: the job's clock,
// which a test driver moves by hand.
func (s *Memory[K, V]) SetClock(now func() int64) { s.now = now }

// NowMillis is the processing time state TTL measures, in Unix
// milliseconds (the pebble backend reads it too).
func NowMillis() int64 { return clock() }

// SetClock makes now the processing time of state TTL, and returns a
// function that restores the previous clock. For tests.
func SetClock(now func() int64) (restore func()) {
	old := clock
	clock = now
	return func() { clock = old }
}

// WithTTL sets the codec's TTL (milliseconds) and returns it: the values
// it writes carry their write times.
func (c *Codec[K, V]) WithTTL(ms int64) *Codec[K, V] {
	c.TTL = ms
	return c
}

// SetTTL makes values expire ms milliseconds after their last write (0:
// never). RestoreMemory sets the codec's, before the state is used.
func (s *Memory[K, V]) SetTTL(ms int64) { s.ttl = ms }

// expired reports whether e's last write is ttl or more ago.
func (s *Memory[K, V]) expired(e *entry[K, V]) bool { return s.nowMillis()-e.ts >= s.ttl }

// sweepCursor is where a sweep goes on: a key group of the subtask's
// range (its index) and a position in its list of entries.
type sweepCursor struct{ group, pos int }

// sweepShare is the share of the state (1/sweepShare of its entries, and
// at least sweepMin) that a sweep looks at.
const (
	sweepShare = 16
	sweepMin   = 1024
)

// Sweep deletes the expired values among the next share of entries (in
// the order of the key groups' lists, going round): called at every
// barrier, before the capture, so that every entry is looked at within
// about sweepShare barriers and the expired ones leave the checkpoints.
func (s *Memory[K, V]) Sweep() {
	if s.ttl == 0 || len(s.all) == 0 {
		return
	}
	n := max(sweepMin, s.idx.len()/sweepShare)
	now := s.nowMillis()
	for looked := 0; looked < n && s.idx.len() > 0; {
		c := &s.sweep
		if c.group >= len(s.all) {
			c.group, c.pos = 0, 0
		}
		list := s.all[c.group]
		if c.pos >= len(list) {
			c.group, c.pos = c.group+1, 0
			looked++ // an empty group counts, so that the loop ends
			continue
		}
		e := list[c.pos]
		c.pos++
		looked++
		if !e.deleted && now-e.ts >= s.ttl {
			// Delete may compact the group's list: the cursor then skips
			// or repeats a few entries, which the next sweep makes good.
			s.Delete(e.key)
			if s.swept != nil {
				s.swept(e.key)
			}
		}
	}
}
