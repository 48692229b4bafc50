package state

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
