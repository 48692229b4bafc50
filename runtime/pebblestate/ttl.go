package pebblestate

import (
	"bytes"
	"errors"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
)

// State TTL (state-ttl; state/ttl.go has the semantics): with a TTL, the
// store's values begin with their write time (a varint of Unix
// milliseconds), which the cache keeps too. A read of an expired value
// finds none and deletes it; at every barrier, before the cut, a sweep
// reads the write times (not the values) of the next share of the
// store's keys and deletes the expired ones, so that they leave the
// checkpoints (Pebble has no compaction filter to do it in compactions).

// expired reports whether a value written at ts has outlived the TTL.
func (s *Keyed[K, V]) expired(ts int64) bool { return s.nowMillis()-ts >= s.codec.TTL }

// nowMillis is the processing time of the state's TTL: its job's clock,
// which a test driver moves by hand.
func (s *Keyed[K, V]) nowMillis() int64 {
	if s.t != nil {
		return s.t.NowMillis()
	}
	return state.NowMillis()
}

// sweepKeys is how many keys of the store a sweep looks at, at least.
const sweepKeys = 4096

// sweepExpired deletes the expired values among the next sweepKeys keys
// of the store (or the next 1/16 of the cache's size, if more), from
// where the last sweep stopped, going round.
func (s *Keyed[K, V]) sweepExpired() {
	if s.codec.TTL == 0 || s.db == nil {
		return
	}
	var expired []K
	s.sweepStore(max(sweepKeys, len(s.cache)/16), s.expired, func(key []byte) {
		k := s.codec.DecodeKey(codec.NewReader(key))
		// A value in the cache is newer than the store's when it was
		// written since: its own write time decides.
		if e := s.cache[k]; e == nil || !e.deleted && s.expired(e.ts) {
			expired = append(expired, k)
		}
	})
	for _, k := range expired {
		s.set(k, nil, true)
	}
}

// sweepStore reads the write times of the next n values of the store
// from sweep on, and hands to each the key (without its key group) of
// each value written at a time that expired says has expired; it is
// Keyed's sweepExpired without the key and value types, compiled once.
func (s *untyped) sweepStore(n int, expired func(ts int64) bool, each func(key []byte)) {
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: groupPrefix(s.start), UpperBound: groupPrefix(s.end)})
	if err != nil {
		s.fail("read", err)
	}
	ok := it.SeekGE(s.sweepStart())
	for looked := 0; looked < n; looked++ {
		if !ok {
			s.sweep = nil // round: the next sweep starts over
			break
		}
		val, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			s.fail("read", err)
		}
		if r := codec.NewReader(val); expired(r.Varint()) && r.Err() == nil {
			each(it.Key()[2:])
		}
		s.sweep = append(s.sweep[:0], it.Key()...)
		ok = it.Next()
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		s.fail("read", err)
	}
	if s.sweep != nil {
		s.sweep = append(s.sweep, 0) // after the last key looked at
	}
}

func (s *untyped) sweepStart() []byte {
	if s.sweep == nil || bytes.Compare(s.sweep, groupPrefix(s.start)) < 0 {
		return groupPrefix(s.start)
	}
	return s.sweep
}
