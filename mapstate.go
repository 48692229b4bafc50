package pipegen

import "iter"

// MapState is a map kept per key in a process operator's state: a field
// of the state struct, such as
//
//	type Card struct {
//		N      int
//		Seen   pipegen.MapState[string, int64] // merchant -> last payment, per card
//	}
//
// Unlike a Go map field, which is part of the one encoded value of the
// state struct, each entry of a MapState is an entry of its own in the
// state backend, under the operator's key and the map's key: a Get or a
// Put reads or writes that entry only, whatever the size of the map (on
// state.backend pebble, a map larger than memory is fine), and a
// checkpoint writes only the entries that changed.
//
// The generated code binds the field to the current key before each call
// of the operator's functions; a MapState is valid during that call only,
// and its zero value (outside a call) panics when used. ctx.Clear() clears
// the maps of the key too.
//
// The map's key K is a string or integer type (of any name): the entries
// are kept, and All yields them, in ascending order of their keys, on
// every backend. V is any type that state can hold.
type MapState[K comparable, V any] struct {
	s MapStore[K, V]
}

// MapStore is what a MapState reads and writes: the runtime's map of the
// current key, which generated code binds with BindMapState. User code
// does not implement or call it.
type MapStore[K comparable, V any] interface {
	Get(k K) (V, bool)
	Put(k K, v V)
	Delete(k K)
	Contains(k K) bool
	Len() int
	All() iter.Seq2[K, V]
	Clear()
}

// BindMapState returns a MapState over s. Generated code calls it.
func BindMapState[K comparable, V any](s MapStore[K, V]) MapState[K, V] {
	return MapState[K, V]{s: s}
}

func (m MapState[K, V]) store() MapStore[K, V] {
	if m.s == nil {
		panic("pipegen.MapState used outside the call of the process function it was passed to")
	}
	return m.s
}

// Get returns the value of k and true, or the zero value and false when
// the map has no k. Changing the value changes nothing: Put it back.
func (m MapState[K, V]) Get(k K) (V, bool) { return m.store().Get(k) }

// Put makes v the value of k.
func (m MapState[K, V]) Put(k K, v V) { m.store().Put(k, v) }

// Delete removes k and its value, if the map has k.
func (m MapState[K, V]) Delete(k K) { m.store().Delete(k) }

// Contains reports whether the map has k.
func (m MapState[K, V]) Contains(k K) bool { return m.store().Contains(k) }

// Len is the number of entries. On state.backend pebble it reads the keys
// of the map (not the values).
func (m MapState[K, V]) Len() int { return m.store().Len() }

// All yields the entries in ascending order of their keys. The map may be
// changed while it is iterated: an entry deleted before it is reached is
// not yielded; one added may or may not be.
func (m MapState[K, V]) All() iter.Seq2[K, V] { return m.store().All() }

// Clear removes every entry.
func (m MapState[K, V]) Clear() { m.store().Clear() }
