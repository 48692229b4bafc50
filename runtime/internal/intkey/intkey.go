// Package intkey reads keys that are 8-byte integers as int64s: the keyed
// state's index (runtime/state) and the window engine's (tumbling panes'
// arrays, sliding windows' pages in runtime/internal/eventtime) find such
// keys by key minus a base, in arrays, while they are dense, instead of
// hashing them into a map.
package intkey

import (
	"reflect"
	"unsafe"
)

// Is reports whether keys of type K are integers of 8 bytes (of any
// named type), which Of reads as an int64.
func Is[K comparable]() bool {
	t := reflect.TypeFor[K]()
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return t.Size() == 8
	}
	return false
}

// Of is k, whose type Is, as an int64 (an unsigned key above MaxInt64 is
// negative: only its bits matter to an index).
func Of[K comparable](k K) int64 { return *(*int64)(unsafe.Pointer(&k)) }

// To is the key of type K, whose type Is, whose bits are v's.
func To[K comparable](v int64) K { return *(*K)(unsafe.Pointer(&v)) }
