package state

import (
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
)

// Keyed is one value of type V per key of type K.
type Keyed[K comparable, V any] interface {
	// Get returns the value of k, or nil when k has none.
	Get(k K) *V
	// Put makes v the value of k. A backend that stores serialized values
	// needs Put after every change made through a pointer from Get; the
	// memory backend does not, and generated code for it skips the call.
	Put(k K, v *V)
	// Delete removes k and its value.
	Delete(k K)
	// Len is the number of keys.
	Len() int
	// All calls yield for every key and value, in no particular order,
	// until yield returns false.
	All(yield func(K, *V) bool)
}

// Memory keeps keyed state in a Go map on the heap.
type Memory[K comparable, V any] struct {
	m map[K]*V
}

// NewMemory returns an empty memory state.
func NewMemory[K comparable, V any]() *Memory[K, V] {
	return &Memory[K, V]{m: make(map[K]*V)}
}

// Get returns the value of k, or nil.
func (s *Memory[K, V]) Get(k K) *V { return s.m[k] }

// Put makes v the value of k.
func (s *Memory[K, V]) Put(k K, v *V) { s.m[k] = v }

// Delete removes k.
func (s *Memory[K, V]) Delete(k K) { delete(s.m, k) }

// Len is the number of keys.
func (s *Memory[K, V]) Len() int { return len(s.m) }

// All calls yield for every key and value.
func (s *Memory[K, V]) All(yield func(K, *V) bool) {
	for k, v := range s.m {
		if !yield(k, v) {
			return
		}
	}
}

var _ Keyed[string, int] = (*Memory[string, int])(nil)

// Sections collects a snapshot's encoded entries, one section per key
// group of a subtask's range [Start, Start+len(W)).
type Sections struct {
	Start int
	W     []codec.Writer
}

// NewSections prepares the sections of key groups [start, end).
func NewSections(start, end int) *Sections {
	return &Sections{Start: start, W: make([]codec.Writer, end-start)}
}

// NewSectionsSized prepares the sections of key groups [start, end), the
// buffer of section i with room for a little more than hint[i] bytes.
func NewSectionsSized(start, end int, hint []int) *Sections {
	s := NewSections(start, end)
	for i := range s.W {
		if i < len(hint) && hint[i] > 0 {
			s.W[i] = *codec.NewWriter(make([]byte, 0, hint[i]+hint[i]/16+64))
		}
	}
	return s
}

// Snapshot encodes every entry into the section of its key group. It runs
// on the operator's goroutine at the barrier: the encoded bytes are the
// copy that is written while processing goes on.
func (s *Memory[K, V]) Snapshot(sec *Sections, keyGroup func(K) int, enc func(w *codec.Writer, k K, v *V)) error {
	for k, v := range s.m {
		kg := keyGroup(k)
		i := kg - sec.Start
		if i < 0 || i >= len(sec.W) {
			return fmt.Errorf("key %v is in key group %d, outside this subtask's range [%d, %d)", k, kg, sec.Start, sec.Start+len(sec.W))
		}
		w := &sec.W[i]
		mark := w.Begin()
		enc(w, k, v)
		w.End(mark)
	}
	return nil
}

// Restore adds the entries of one key group's section.
func (s *Memory[K, V]) Restore(section []byte, dec func(r *codec.Reader) (K, *V)) error {
	r := codec.NewReader(section)
	for r.More() {
		k, v := dec(r.Nested())
		if r.Err() != nil {
			break
		}
		s.m[k] = v
	}
	return r.Err()
}
