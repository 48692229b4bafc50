package state

import (
	"cmp"
	"iter"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
)

// MapKey is the key of one entry of map state (pipegen.MapState): the
// operator's key K and the map's key UK. Its key group is K's, so that a
// key's map lives with the rest of its state.
type MapKey[K comparable, UK MapKeyType] struct {
	K  K
	UK UK
}

// MapKeyType is what the keys of map state may be: strings and integers,
// which have an order and an encoding in that order.
type MapKeyType interface {
	~string | ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// KeyOrder writes and reads the keys of a map state in their order
// (codec's ordered encodings): a byte-ordered store then keeps a key's
// entries in the order of their map keys.
type KeyOrder[UK MapKeyType] struct {
	Encode func(*codec.Writer, UK)
	Decode func(*codec.Reader) UK
}

// StringKeys is the order of map keys of a string type.
func StringKeys[UK ~string]() KeyOrder[UK] {
	return KeyOrder[UK]{
		Encode: func(w *codec.Writer, k UK) { w.OrderedString(string(k)) },
		Decode: func(r *codec.Reader) UK { return UK(r.OrderedString()) },
	}
}

// IntKeys is the order of map keys of a signed integer type.
func IntKeys[UK ~int | ~int8 | ~int16 | ~int32 | ~int64]() KeyOrder[UK] {
	return KeyOrder[UK]{
		Encode: func(w *codec.Writer, k UK) { w.OrderedInt(int64(k)) },
		Decode: func(r *codec.Reader) UK { return UK(r.OrderedInt()) },
	}
}

// UintKeys is the order of map keys of an unsigned integer type.
func UintKeys[UK ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64]() KeyOrder[UK] {
	return KeyOrder[UK]{
		Encode: func(w *codec.Writer, k UK) { w.OrderedUint(uint64(k)) },
		Decode: func(r *codec.Reader) UK { return UK(r.OrderedUint()) },
	}
}

// MapCodec is the codec of a map state's entries: hashed by the
// operator's key (hash), written as the operator's key (encodeKey) and
// then the map's key in its order, the value by encodeValue. The schemas
// are the map's key's and value's.
func MapCodec[K comparable, UK MapKeyType, UV any](hash func(K) uint64, encodeKey func(*codec.Writer, K), decodeKey func(*codec.Reader) K,
	order KeyOrder[UK], encodeValue func(*codec.Writer, *UV), decodeValue func(*codec.Reader) *UV, keySchema, valueSchema string) *Codec[MapKey[K, UK], UV] {
	return &Codec[MapKey[K, UK], UV]{
		Hash: func(k MapKey[K, UK]) uint64 { return hash(k.K) },
		EncodeKey: func(w *codec.Writer, k MapKey[K, UK]) {
			encodeKey(w, k.K)
			order.Encode(w, k.UK)
		},
		DecodeKey: func(r *codec.Reader) MapKey[K, UK] {
			k := decodeKey(r)
			return MapKey[K, UK]{K: k, UK: order.Decode(r)}
		},
		EncodeValue: encodeValue,
		DecodeValue: decodeValue,
		KeySchema:   keySchema,
		ValueSchema: valueSchema,
	}
}

// MemoryMap is a map state (pipegen.MapState) of a keyed operator held in
// memory: each entry is an entry of its own of a Memory state keyed by
// MapKey, so that checkpoints write the entries that changed (deltas),
// and restores at another parallelism place them by their key group like
// any keyed state. An index of each key's map keys serves Len, All and
// Clear; it is built from the entries at the first use after a restore.
//
// Bind sets the operator's key that the map methods (pipegen.MapStore)
// work on.
type MemoryMap[K comparable, UK MapKeyType, UV any] struct {
	st    *Memory[MapKey[K, UK], UV]
	index map[K]map[UK]struct{}
	cur   K
}

// NewMemoryMap returns an empty map state.
func NewMemoryMap[K comparable, UK MapKeyType, UV any]() *MemoryMap[K, UK, UV] {
	m := &MemoryMap[K, UK, UV]{st: NewMemory[MapKey[K, UK], UV]()}
	m.st.swept = func(mk MapKey[K, UK]) {
		if m.index != nil {
			m.unindex(mk)
		}
	}
	return m
}

func (m *MemoryMap[K, UK, UV]) unindex(mk MapKey[K, UK]) {
	keys := m.index[mk.K]
	delete(keys, mk.UK)
	if len(keys) == 0 {
		delete(m.index, mk.K)
	}
}

// live returns the value of uk in k's map, or nil; an expired entry
// (state TTL) is deleted.
func (m *MemoryMap[K, UK, UV]) live(k K, uk UK) *UV {
	mk := MapKey[K, UK]{k, uk}
	if v := m.st.peek(mk); v != nil {
		return v
	}
	if _, ok := m.index[k][uk]; ok {
		m.st.Delete(mk) // expired
		m.unindex(mk)
	}
	return nil
}

// Store is the state that holds the entries, which checkpoints write and
// restores fill.
func (m *MemoryMap[K, UK, UV]) Store() *Memory[MapKey[K, UK], UV] { return m.st }

// Bind makes k the key whose map the other methods read and change.
func (m *MemoryMap[K, UK, UV]) Bind(k K) {
	m.cur = k
	if m.index == nil {
		m.index = map[K]map[UK]struct{}{}
		for e := range m.st.idx.all {
			m.add(e.key)
		}
	}
}

func (m *MemoryMap[K, UK, UV]) add(mk MapKey[K, UK]) {
	keys := m.index[mk.K]
	if keys == nil {
		keys = map[UK]struct{}{}
		m.index[mk.K] = keys
	}
	keys[mk.UK] = struct{}{}
}

// Get returns the value of uk in the current key's map.
func (m *MemoryMap[K, UK, UV]) Get(uk UK) (UV, bool) {
	if v := m.live(m.cur, uk); v != nil {
		return *v, true
	}
	var zero UV
	return zero, false
}

// Put makes v the value of uk in the current key's map.
func (m *MemoryMap[K, UK, UV]) Put(uk UK, v UV) {
	mk := MapKey[K, UK]{m.cur, uk}
	if m.st.peek(mk) == nil {
		m.add(mk)
	}
	m.st.Put(mk, &v)
}

// Delete removes uk from the current key's map.
func (m *MemoryMap[K, UK, UV]) Delete(uk UK) {
	if _, ok := m.index[m.cur][uk]; !ok {
		return
	}
	mk := MapKey[K, UK]{m.cur, uk}
	m.st.Delete(mk)
	m.unindex(mk)
}

// Contains reports whether the current key's map has uk.
func (m *MemoryMap[K, UK, UV]) Contains(uk UK) bool { return m.live(m.cur, uk) != nil }

// Len is the number of entries of the current key's map; with a TTL it
// looks at each, to leave out (and delete) the expired ones.
func (m *MemoryMap[K, UK, UV]) Len() int {
	if m.st.ttl == 0 {
		return len(m.index[m.cur])
	}
	n := 0
	for range m.All() {
		n++
	}
	return n
}

// All yields the entries of the current key's map in ascending order of
// their keys (the order of the pebble backend's store).
func (m *MemoryMap[K, UK, UV]) All() iter.Seq2[UK, UV] {
	k := m.cur
	return func(yield func(UK, UV) bool) {
		keys := m.index[k]
		if len(keys) == 0 {
			return
		}
		sorted := make([]UK, 0, len(keys))
		for uk := range keys {
			sorted = append(sorted, uk)
		}
		slices.SortFunc(sorted, cmp.Compare[UK])
		for _, uk := range sorted {
			v := m.live(k, uk)
			if v == nil {
				continue // deleted while iterating, or expired
			}
			if !yield(uk, *v) {
				return
			}
		}
	}
}

// Clear removes every entry of the current key's map.
func (m *MemoryMap[K, UK, UV]) Clear() {
	for uk := range m.index[m.cur] {
		m.st.Delete(MapKey[K, UK]{m.cur, uk})
	}
	delete(m.index, m.cur)
}

// peek returns the value of k, or nil, for reading only: the entry is
// not counted as changed (the caller never changes the value through the
// pointer; Put replaces it).
func (s *Memory[K, V]) peek(k K) *V {
	if e := s.idx.get(k); e != nil && (s.ttl == 0 || !s.expired(e)) {
		return e.val
	}
	return nil
}
