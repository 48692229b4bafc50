package pebblestate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
)

// Map is a map state (pipegen.MapState) of a keyed operator in a Pebble
// store of its own: each entry is a key of the store, the key group, the
// operator's key and the map's key in its order (state.MapCodec), so that
// a Get or a Put reads or writes one entry whatever the size of the map,
// and the entries of one key's map are a range of the store, in the order
// of their map keys. The store is a Keyed state of its own, named
// "map.F", checkpointed and restored like the node's main state.
//
// Bind sets the operator's key that the map methods (pipegen.MapStore)
// work on.
type Map[K comparable, UK state.MapKeyType, UV any] struct {
	st *Keyed[state.MapKey[K, UK], UV]
	// encodeKey writes an operator's key: the prefix of its map's
	// entries after the key group.
	encodeKey func(*codec.Writer, K)
	cur       K
	prefix    codec.Writer
}

// OpenMap opens the map state name ("map.F") of subtask t of node, empty
// or restored. encodeKey is the node's key serializer, the one c's
// EncodeKey begins with.
func OpenMap[K comparable, UK state.MapKeyType, UV any](t *checkpoint.Task, node int, name string, encodeKey func(*codec.Writer, K), c *state.Codec[state.MapKey[K, UK], UV]) *Map[K, UK, UV] {
	return &Map[K, UK, UV]{st: OpenState(t, node, name, c), encodeKey: encodeKey}
}

// Store is the state that holds the entries, which checkpoints write.
func (m *Map[K, UK, UV]) Store() *Keyed[state.MapKey[K, UK], UV] { return m.st }

// Bind makes k the key whose map the other methods read and change.
func (m *Map[K, UK, UV]) Bind(k K) { m.cur = k }

// Get returns the value of uk in the current key's map.
func (m *Map[K, UK, UV]) Get(uk UK) (UV, bool) {
	if v := m.st.peek(state.MapKey[K, UK]{K: m.cur, UK: uk}); v != nil {
		return *v, true
	}
	var zero UV
	return zero, false
}

// Put makes v the value of uk in the current key's map.
func (m *Map[K, UK, UV]) Put(uk UK, v UV) { m.st.Put(state.MapKey[K, UK]{K: m.cur, UK: uk}, &v) }

// Delete removes uk from the current key's map.
func (m *Map[K, UK, UV]) Delete(uk UK) { m.st.Delete(state.MapKey[K, UK]{K: m.cur, UK: uk}) }

// Contains reports whether the current key's map has uk.
func (m *Map[K, UK, UV]) Contains(uk UK) bool {
	return m.st.peek(state.MapKey[K, UK]{K: m.cur, UK: uk}) != nil
}

// Len is the number of entries of the current key's map: it counts the
// keys of its range of the store (with a TTL, it reads each entry, to
// leave out the expired ones).
func (m *Map[K, UK, UV]) Len() int {
	n := 0
	if m.st.codec.TTL > 0 {
		for range m.All() {
			n++
		}
		return n
	}
	m.keys(m.cur, func([]UK) bool { return true }, &n)
	return n
}

// All yields the entries of the current key's map in ascending order of
// their keys: the store's order. It writes the changed entries to the
// store first (waiting, during a checkpoint, until the store's checkpoint
// is taken), then reads the keys of the map's range a chunk at a time,
// and each value when its entry is reached.
func (m *Map[K, UK, UV]) All() iter.Seq2[UK, UV] {
	k := m.cur
	return func(yield func(UK, UV) bool) {
		m.keys(k, func(chunk []UK) bool {
			for _, uk := range chunk {
				v := m.st.peek(state.MapKey[K, UK]{K: k, UK: uk})
				if v == nil {
					continue // deleted while iterating
				}
				if !yield(uk, *v) {
					return false
				}
			}
			return true
		}, nil)
	}
}

// Clear removes every entry of the current key's map.
func (m *Map[K, UK, UV]) Clear() {
	k := m.cur
	m.keys(k, func(chunk []UK) bool {
		for _, uk := range chunk {
			m.st.Delete(state.MapKey[K, UK]{K: k, UK: uk})
		}
		return true
	}, nil)
}

// chunkKeys is how many map keys keys reads from the store at a time.
const chunkKeys = 256

// keys hands the map keys of k's map to fn, a chunk at a time, in order,
// until fn returns false; count, when set, is only counted. The changed
// entries are written to the store first; the chunks are read by
// iterators of their own, so that what fn changes is seen by the next
// chunk.
func (m *Map[K, UK, UV]) keys(k K, fn func([]UK) bool, count *int) {
	s := m.st
	s.spill(true)
	m.prefix.Reset()
	kg := s.keyGroup(state.MapKey[K, UK]{K: k})
	var p [2]byte
	binary.BigEndian.PutUint16(p[:], uint16(kg))
	m.prefix.Raw(p[:])
	m.encodeKey(&m.prefix, k)
	lower := append([]byte(nil), m.prefix.Bytes()...)
	upper := successor(lower)
	chunk := make([]UK, 0, chunkKeys)
	for {
		it, err := s.db.NewIter(&kv.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			s.fail("read", err)
		}
		chunk = chunk[:0]
		var last []byte
		for ok := it.First(); ok && len(chunk) < chunkKeys; ok = it.Next() {
			if count != nil {
				*count++
				continue
			}
			r := codec.NewReader(it.Key()[2:])
			mk := s.codec.DecodeKey(r)
			if err := r.Err(); err != nil {
				it.Close()
				s.fail(fmt.Sprintf("decode a key of the map of %v", k), err)
			}
			chunk = append(chunk, mk.UK)
			last = append(last[:0], it.Key()...)
		}
		err = errors.Join(it.Error(), it.Close())
		if err != nil {
			s.fail("read", err)
		}
		if len(chunk) == 0 || !fn(chunk) || len(chunk) < chunkKeys {
			return
		}
		lower = append(bytes.Clone(last), 0) // the first key after the last one read
	}
}

// successor is the first key after every key that begins with p.
func successor(p []byte) []byte {
	out := append([]byte(nil), p...)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] != 0xff {
			out[i]++
			return out[:i+1]
		}
	}
	return nil // no upper bound
}

// peek returns the value of k, or nil, for reading only: the entry is not
// counted as changed (the caller never changes the value through the
// pointer; Put replaces it). A value read from the store is kept decoded
// in the cache, as a clean entry.
func (s *Keyed[K, V]) peek(k K) *V {
	if e := s.cache[k]; e != nil {
		e.used = true
		if e.deleted {
			return nil
		}
		if s.codec.TTL > 0 && s.expired(e.ts) {
			s.set(k, nil, true)
			return nil
		}
		return e.val
	}
	if len(s.cache) >= s.maxCache+s.spillAt {
		s.spill(false) // trims the cache
	}
	v, ts := s.read(k)
	if v == nil {
		return nil
	}
	if s.codec.TTL > 0 && s.expired(ts) {
		s.set(k, nil, true)
		return nil
	}
	s.cache[k] = &entry[K, V]{key: k, val: v, used: true, ts: ts}
	return v
}
