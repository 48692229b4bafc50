// Package kv is the face of a Pebble store that pebblestate's generic
// types see: interfaces whose methods name no Pebble type, implemented by
// Pebble's own store, batch and iterator.
//
// Why it exists: Go compiles the methods of an instantiated generic type
// in every package that reaches the type, and Pebble's store reaches a
// few hundred of them (its manifest B-trees, swiss maps, caches). A
// generated program instantiates pebblestate's generic types (Keyed,
// Timers, Windows, joins) in its own package: when their fields or
// methods named *pebble.DB, *pebble.Batch or *pebble.Iterator, even
// behind a pointer, every such program compiled those instantiations
// again (about 690 functions, 0.9 CPU-s of each compile). Behind an
// interface whose methods name no Pebble type the compiler stops: it
// does not look at what implements it. So generic code in pebblestate
// names only this package's types, and only code that is not generic
// (opening a store, its metrics) unwraps them with Pebble.
//
// The cost is an interface call per store operation, beside which a
// Pebble seek, step or batch write (tens to hundreds of nanoseconds) is
// large.
package kv

import (
	"context"
	"io"

	"github.com/cockroachdb/pebble/v2"
)

// ErrNotFound is the error of Get for a key the store does not hold.
var ErrNotFound = pebble.ErrNotFound

// IterOptions are the options of an iterator: its bounds, and whether
// a seek reads the Bloom filters of the last level (pebble.IterOptions).
type IterOptions struct {
	LowerBound, UpperBound []byte
	UseL6Filters           bool
}

func (o *IterOptions) pebble() *pebble.IterOptions {
	if o == nil {
		return nil
	}
	return &pebble.IterOptions{LowerBound: o.LowerBound, UpperBound: o.UpperBound, UseL6Filters: o.UseL6Filters}
}

// Reader reads a store or a batch.
type Reader interface {
	// Get returns the value of key, valid until closer is closed, or
	// ErrNotFound.
	Get(key []byte) (value []byte, closer io.Closer, err error)
	NewIter(o *IterOptions) (Iterator, error)
}

// Writer writes a store or a batch. A store's writes are not synced:
// the stores keep no write-ahead log, and are rebuilt from checkpoints.
type Writer interface {
	Set(key, value []byte) error
	Delete(key []byte) error
	// DeleteRange deletes the keys in [start, end).
	DeleteRange(start, end []byte) error
}

// Store is a Pebble store.
type Store interface {
	Reader
	Writer
	NewBatch() Batch
	// NewIndexedBatch is a batch that its own reads see.
	NewIndexedBatch() Batch
	Flush() error
	// Checkpoint writes the store's checkpoint (hard links) in dir.
	Checkpoint(dir string) error
	Compact(ctx context.Context, start, end []byte, parallelize bool) error
	Close() error
}

// Batch is a batch of writes to a store.
type Batch interface {
	Reader
	Writer
	// Commit writes the batch to its store, not synced.
	Commit() error
	// Len is the batch's size in bytes.
	Len() int
	Empty() bool
	Close() error
}

// Iterator is an iterator of a store or a batch (pebble.Iterator).
type Iterator interface {
	First() bool
	Next() bool
	SeekGE(key []byte) bool
	SeekPrefixGE(key []byte) bool
	Key() []byte
	ValueAndErr() ([]byte, error)
	Error() error
	Close() error
	// SetOptions sets the iterator's bounds and, over an indexed batch,
	// makes it see the batch as it is now; it costs less than a new
	// iterator.
	SetOptions(o *IterOptions)
}

// Wrap is db as a Store.
func Wrap(db *pebble.DB) Store { return (*store)(db) }

// Pebble is the Pebble store of s, for what only Pebble's own API does
// (its metrics). Generic code must not call it: it names a Pebble type.
func Pebble(s Store) *pebble.DB { return (*pebble.DB)(s.(*store)) }

type store pebble.DB

func (s *store) db() *pebble.DB { return (*pebble.DB)(s) }

func (s *store) Get(key []byte) ([]byte, io.Closer, error) { return s.db().Get(key) }

func (s *store) NewIter(o *IterOptions) (Iterator, error) { return iter(s.db().NewIter(o.pebble())) }

func (s *store) Set(key, value []byte) error { return s.db().Set(key, value, pebble.NoSync) }
func (s *store) Delete(key []byte) error     { return s.db().Delete(key, pebble.NoSync) }
func (s *store) DeleteRange(start, end []byte) error {
	return s.db().DeleteRange(start, end, pebble.NoSync)
}
func (s *store) NewBatch() Batch             { return (*batch)(s.db().NewBatch()) }
func (s *store) NewIndexedBatch() Batch      { return (*batch)(s.db().NewIndexedBatch()) }
func (s *store) Flush() error                { return s.db().Flush() }
func (s *store) Checkpoint(dir string) error { return s.db().Checkpoint(dir) }
func (s *store) Close() error                { return s.db().Close() }

func (s *store) Compact(ctx context.Context, start, end []byte, parallelize bool) error {
	return s.db().Compact(ctx, start, end, parallelize)
}

type batch pebble.Batch

func (b *batch) b() *pebble.Batch { return (*pebble.Batch)(b) }

func (b *batch) Get(key []byte) ([]byte, io.Closer, error) { return b.b().Get(key) }

func (b *batch) NewIter(o *IterOptions) (Iterator, error) { return iter(b.b().NewIter(o.pebble())) }

func (b *batch) Set(key, value []byte) error         { return b.b().Set(key, value, nil) }
func (b *batch) Delete(key []byte) error             { return b.b().Delete(key, nil) }
func (b *batch) DeleteRange(start, end []byte) error { return b.b().DeleteRange(start, end, nil) }
func (b *batch) Commit() error                       { return b.b().Commit(pebble.NoSync) }
func (b *batch) Len() int                            { return b.b().Len() }
func (b *batch) Empty() bool                         { return b.b().Empty() }
func (b *batch) Close() error                        { return b.b().Close() }

type iterator pebble.Iterator

// iter is a new Pebble iterator as an Iterator: nil, not an Iterator
// holding a nil pointer, when there is none.
func iter(it *pebble.Iterator, err error) (Iterator, error) {
	if err != nil {
		return nil, err
	}
	return (*iterator)(it), nil
}

func (i *iterator) it() *pebble.Iterator { return (*pebble.Iterator)(i) }

func (i *iterator) First() bool                  { return i.it().First() }
func (i *iterator) Next() bool                   { return i.it().Next() }
func (i *iterator) SeekGE(key []byte) bool       { return i.it().SeekGE(key) }
func (i *iterator) SeekPrefixGE(key []byte) bool { return i.it().SeekPrefixGE(key) }
func (i *iterator) Key() []byte                  { return i.it().Key() }
func (i *iterator) ValueAndErr() ([]byte, error) { return i.it().ValueAndErr() }
func (i *iterator) Error() error                 { return i.it().Error() }
func (i *iterator) Close() error                 { return i.it().Close() }
func (i *iterator) SetOptions(o *IterOptions)    { i.it().SetOptions(o.pebble()) }
