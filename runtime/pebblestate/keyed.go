package pebblestate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	pvfs "github.com/cockroachdb/pebble/v2/vfs"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/invariants"
	"github.com/pipegen/pipegen/runtime/internal/keygroup"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
	"github.com/pipegen/pipegen/runtime/vfs"
)

// Keyed is the keyed state of one subtask of a keyed node, in a Pebble
// store with a cache of decoded values in front.
type Keyed[K comparable, V any] struct {
	untyped
	codec *state.Codec[K, V]
	// keyGroup places a key.
	keyGroup func(K) int

	// cache holds decoded values; dirty lists the entries changed since
	// they were last written to the store.
	cache map[K]*entry[K, V]
	dirty []*entry[K, V]
	// spillAt and maxCache are the cache's sizes (tests make them small).
	spillAt, maxCache int
	// slack is how far the cache may grow past maxCache before the next
	// trim: 0 unless the last trim found too few values it could drop
	// (changed ones, or ones a checkpoint still needs), so that a trim
	// that cannot shrink the cache is not tried again at every access.
	slack int
	// capture is the checkpoint being taken, nil when none; seq counts
	// the captures.
	capture *capture[K, V]
	seq     uint64

	key, val codec.Writer
}

// untyped is the part of a Keyed that its key and value types do not
// touch: the store, its files and checkpoints, its parts. Its methods are
// compiled once, here, instead of once for every pair of key and value
// types of every program: as Keyed's, they were 11% of the code compiled
// for golden/pebble-joins's program, with its seven Keyed types (the
// sizes that go build -gcflags=PACKAGE=-S prints for its package, summed:
// 1.33 MB, 1.18 since).
type untyped struct {
	t    *checkpoint.Task
	node int
	name string // the node's name, for errors
	// uid begins the names of the store's files: the node's uid, and for
	// a named state (map state) a dash and the state's name.
	uid   string
	state string // "" for the node's main state
	// [start, end) are the subtask's key groups.
	start, end int

	files *files
	db    kv.Store
	// reads is the iterator read looks keys up with, nil until the first
	// read; it sees the store as it was when it was made, when commits
	// was readsAt: commits counts the batches committed to the store (by
	// the subtask or the writer), so that a read after one makes a new
	// iterator. DB.Get would need none, but never reads the Bloom filters
	// of the last level, where the store's compactions put most of its
	// keys: a key the store does not hold (every new key) cost a data
	// block read and decompression there, about a third of the CPU of
	// the state benchmark's job at 3M keys (examples/statebench).
	reads   kv.Iterator
	readsAt uint64
	commits atomic.Uint64

	// frozen is set while a checkpoint of the store is being taken: the
	// store must stay as it was at the barrier, so changed values stay in
	// the cache until it is clear.
	frozen atomic.Bool
	// broken is the error of a write the writer could not make.
	broken atomic.Pointer[error]
	// compacting is set while a compaction of the store runs (in its own
	// goroutine, which stop cancels and compacted waits for).
	compacting atomic.Bool
	compacted  sync.WaitGroup
	stop       context.CancelFunc
	// sweep is the store key a sweep for expired values (state TTL)
	// starts from; nil: the first.
	sweep []byte
	// uploaded holds, by checkpoint id, the names in the shared folder of
	// the sstables that checkpoint refers to: the next checkpoint refers
	// again to those of the newest completed one that it still has.
	uploaded map[int64]map[string]string
	// names maps a restored sstable's name in the store to its name in
	// the shared folder.
	names map[string]string
	// parts are the node's other keyed structures in the store (timers).
	parts []part
	// readMemory, when set, reads the state files of one subtask of the
	// memory backend (or of a savepoint), a full one and the deltas on
	// top of it, whose layout is not the per-key values' (windows);
	// noCanonical is set when a part writes the savepoint's main file.
	readMemory  func([]storage.StateFile, *storage.Loaded)
	noCanonical bool
}

type entry[K comparable, V any] struct {
	key     K
	val     *V
	deleted bool
	// gen says where the entry's value is, by the seq of the store's
	// captures: s.seq+1 while it changed since it was last written (it is
	// in s.dirty); s.seq while it is as it was at the newest capture's
	// barrier, which holds it pending until the subtask touches it; lower
	// once the store holds it. A barrier makes every changed value
	// pending at once, by counting s.seq up, rather than marking each:
	// that loop was most of a subtask's stall at a barrier (tens of
	// milliseconds for 50K changed values on a loaded machine). capt is
	// the seq of the newest capture that has encoded the entry (or that
	// it is newer than), busy while one side encodes it.
	gen  uint64
	capt atomic.Uint64
	// used is set when the entry is read or changed, and cleared when the
	// cache is trimmed: an entry used since the last trim stays (the
	// CLOCK policy), so that the keys in use stay decoded.
	used bool
	// ts is the processing time (Unix milliseconds) of the value's last
	// write, kept with a TTL only (ttl.go).
	ts int64
}

// The cache's sizes (budget.go): changed values are written to the
// store in batches of spillAt, and at every barrier (by the writer,
// whatever their number): a key changed many times between two batches is
// written once, and while the keys that change between two barriers are
// fewer than spillAt, they are written only at barriers. At most maxCache
// values are kept decoded (more while a checkpoint is being taken).

// Open opens the state of subtask t of keyed node, empty or restored from
// the checkpoint the job resumes from (the restore is done with the other
// subtasks', before any runs). The store is closed and its files removed
// when the run ends.
func Open[K comparable, V any](t *checkpoint.Task, node int, c *state.Codec[K, V]) *Keyed[K, V] {
	return OpenState(t, node, "", c)
}

// OpenState is Open of the named state of node ("map.F": the map state
// of field F of a process's state), a store of its own.
func OpenState[K comparable, V any](t *checkpoint.Task, node int, stateName string, c *state.Codec[K, V]) *Keyed[K, V] {
	return openState(t, node, stateName, c, nil)
}

// openState is OpenState of a store whose keys cmp orders (nil: Pebble's
// default comparer).
func openState[K comparable, V any](t *checkpoint.Task, node int, stateName string, c *state.Codec[K, V], cmp *pebble.Comparer) *Keyed[K, V] {
	n := t.Node(node)
	uid := checkpoint.StateStem(n.UID, stateName)
	start, end := t.KeyRange(node)
	maxP := t.MaxParallelism()
	b := budgetFor(memoryLimit(), stores(t))
	s := &Keyed[K, V]{
		untyped: untyped{t: t, node: node, name: n.Name, uid: uid, state: stateName, start: start, end: end,
			uploaded: map[int64]map[string]string{}, names: map[string]string{}},
		codec: c, keyGroup: func(k K) int { return keygroup.Of(c.Hash(k), maxP) },
		cache: map[K]*entry[K, V]{}, spillAt: b.spillAt, maxCache: b.maxCache}
	st := t.Storage()
	s.files = newFiles(st.FS, filepath.Join(st.Dir, "pebble", fmt.Sprintf("%s-%d", uid, t.Subtask())))
	s.files.budget, s.files.comparer = b, cmp
	if err := s.files.reset(); err != nil {
		fault.Abortf("operators.%s[%d]: pebble state: %w", n.Name, t.Subtask(), err)
	}
	t.OnClose(s.close)
	if files, l := t.RestoredFiles(node, stateName); len(files) > 0 {
		t.OnRestore(func() { s.restore(files, l) })
		return s
	}
	s.open()
	return s
}

// stores is the number of pebble stores the job opens for the main
// states of its keyed nodes: one per subtask of every reduce, aggregate,
// process and join, windowed or not (windows and joins are a store).
// The stores of map states (OpenState with a name) are not counted: each
// takes a share as large again.
func stores(t *checkpoint.Task) int {
	n := 0
	for id := range t.Nodes() {
		c := t.Node(id)
		if c.KeySchema != "" && (c.Kind == "reduce" || c.Kind == "aggregate" || c.Kind == "process" || c.Kind == "join") {
			n += c.Parallelism
		}
	}
	return n
}

// open opens the store in the working folder.
func (s *untyped) open() {
	db, err := s.files.open(s.files.dir, false)
	if err != nil {
		fault.Abortf("operators.%s[%d]: open pebble state: %w", s.name, s.t.Subtask(), err)
	}
	s.db = db
}

// close closes the store and removes its files: they are in the
// checkpoints.
func (s *untyped) close() {
	if s.stop != nil {
		s.stop()
	}
	s.compacted.Wait()
	for _, p := range s.parts {
		p.close()
	}
	// The writers have stopped: a capture not done never will be.
	s.closeReads()
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
	s.files.removeAll()
}

// fail stops the subtask with an error of the store.
func (s *untyped) fail(what string, err error) {
	fault.Abortf("operators.%s[%d]: pebble state: %s: %w", s.name, s.t.Subtask(), what, err)
}

// storeKey encodes k as the store's key: its key group, then k.
func (s *Keyed[K, V]) storeKey(k K) []byte { return s.storeKeyIn(&s.key, k) }

// storeKeyIn is storeKey into the buffer w.
func (s *Keyed[K, V]) storeKeyIn(w *codec.Writer, k K) []byte {
	w.Reset()
	kg := s.keyGroup(k)
	if kg < s.start || kg >= s.end {
		fault.Abortf("operators.%s[%d]: key %v is in key group %d, outside this subtask's range [%d, %d)", s.name, s.t.Subtask(), k, kg, s.start, s.end)
	}
	var p [2]byte
	binary.BigEndian.PutUint16(p[:], uint16(kg))
	w.Raw(p[:])
	s.codec.EncodeKey(w, k)
	return w.Bytes()
}

// groupPrefix is the first key of key group kg.
func groupPrefix(kg int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(kg)) }

// Get returns the value of k, or nil. The value may be changed through
// the pointer; it is written to the store later.
func (s *Keyed[K, V]) Get(k K) *V {
	if len(s.dirty) >= s.spillAt || len(s.cache) > s.maxCache+s.slack {
		s.spill(false)
	}
	if e := s.cache[k]; e != nil {
		if e.gen == s.seq {
			s.preImage(e)
		}
		if e.deleted {
			return nil
		}
		if s.codec.TTL > 0 {
			if s.expired(e.ts) {
				s.set(k, nil, true)
				return nil
			}
			e.ts = s.nowMillis() // the value may be changed: a write
		}
		e.used = true
		s.changed(e)
		return e.val
	}
	v, ts := s.read(k)
	if v == nil {
		return nil
	}
	if s.codec.TTL > 0 {
		if s.expired(ts) {
			s.set(k, nil, true)
			return nil
		}
		ts = s.nowMillis()
	}
	e := &entry[K, V]{key: k, val: v, used: true, ts: ts}
	s.cache[k] = e
	s.changed(e)
	return v
}

// read decodes the value of k in the store, and its write time (with a
// TTL); nil when the store has none.
func (s *Keyed[K, V]) read(k K) (*V, int64) {
	it := s.reader()
	key := s.storeKey(k)
	// SeekPrefixGE stops at the first key at or after k that shares its
	// prefix (all of k, unless the store's comparer splits keys: joins.go):
	// k is in the store only if that is k.
	if !it.SeekPrefixGE(key) || !bytes.Equal(it.Key(), key) {
		if err := it.Error(); err != nil {
			s.fail("read", err)
		}
		return nil, 0
	}
	data, err := it.ValueAndErr()
	if err != nil {
		s.fail("read", err)
	}
	r := codec.NewReader(data)
	var ts int64
	if s.codec.TTL > 0 {
		ts = r.Varint()
	}
	v := s.codec.DecodeValue(r)
	if err := r.Err(); err != nil {
		s.fail(fmt.Sprintf("decode the value of %v", k), err)
	}
	return v, ts
}

// reader returns the iterator that sees the store's newest batches.
func (s *untyped) reader() kv.Iterator {
	n := s.commits.Load()
	if s.reads != nil && s.readsAt == n {
		return s.reads
	}
	s.closeReads()
	it, err := s.db.NewIter(&kv.IterOptions{UseL6Filters: true})
	if err != nil {
		s.fail("read", err)
	}
	s.reads, s.readsAt = it, n
	return it
}

// closeReads closes the iterator of read, if any: it holds on to the
// memtables and sstables it saw, which the store would free or delete.
func (s *untyped) closeReads() {
	if s.reads != nil {
		s.reads.Close()
		s.reads = nil
	}
}

// committed counts a batch committed to the store: reads after it use a
// new iterator.
func (s *untyped) committed() { s.commits.Add(1) }

// Put makes v the value of k.
func (s *Keyed[K, V]) Put(k K, v *V) { s.set(k, v, false) }

// GetOrAdd returns the value of k, as Get does, or when k has none makes
// a zero value k's and returns it (added set).
func (s *Keyed[K, V]) GetOrAdd(k K) (v *V, added bool) {
	if v := s.Get(k); v != nil {
		return v, false
	}
	v = new(V)
	s.set(k, v, false)
	return v, true
}

// Delete removes k and its value.
func (s *Keyed[K, V]) Delete(k K) { s.set(k, nil, true) }

// set gives k the value v, or its deletion, in the cache.
func (s *Keyed[K, V]) set(k K, v *V, deleted bool) {
	if len(s.dirty) >= s.spillAt || len(s.cache) > s.maxCache+s.slack {
		s.spill(false)
	}
	e := s.cache[k]
	if e == nil {
		e = &entry[K, V]{key: k}
		s.cache[k] = e
	} else if e.gen == s.seq {
		s.preImage(e)
	}
	e.val, e.deleted, e.used = v, deleted, true
	if s.codec.TTL > 0 {
		e.ts = s.nowMillis()
	}
	s.changed(e)
}

func (s *Keyed[K, V]) changed(e *entry[K, V]) {
	if !s.isDirty(e) {
		e.gen = s.seq + 1
		s.dirty = append(s.dirty, e)
	}
}

// isDirty reports whether e changed since it was last written: whether it
// is in s.dirty.
func (s *Keyed[K, V]) isDirty(e *entry[K, V]) bool { return e.gen == s.seq+1 }

// spill writes the changed values to the store, unless a checkpoint of
// it is being taken (all: even then, after waiting for it), and trims the
// cache.
func (s *Keyed[K, V]) spill(all bool) {
	if err := s.broken.Load(); err != nil {
		fault.Abort(*err)
	}
	if invariants.On {
		s.check()
	}
	frozen := s.frozen.Load()
	if frozen && (all || len(s.dirty) >= 4*s.spillAt) {
		// The cache would outgrow its bounds: wait for the store's
		// checkpoint to be taken.
		s.waitCapture()
		frozen = false
	}
	if !frozen {
		if b := s.batch(); b != nil {
			if err := b.Commit(); err != nil {
				s.fail("write", err)
			}
			b.Close()
			s.committed()
			s.closeReads()
			s.maybeCompact()
		}
	}
	if len(s.cache) > s.maxCache+s.slack {
		s.trim()
	}
}

// trim drops decoded values from the cache, down to three quarters of
// maxCache: first those not used since the last trim (the CLOCK policy),
// then, if that was not enough, the others. It drops only values the
// store holds: not those changed since they were last written, nor,
// while a checkpoint of the store is being taken, those of its capture,
// which reach the store only when the writer has written them. Trimming
// here, and not only after a batch is written, bounds the cache when the
// changes between two barriers are fewer than a batch: the barriers then
// write them all, and no batch ever is.
func (s *Keyed[K, V]) trim() {
	var c *capture[K, V]
	if s.frozen.Load() {
		c = s.capture
	}
	n := len(s.cache) - s.maxCache*3/4
	for pass := 0; pass < 2 && n > 0; pass++ {
		for k, e := range s.cache {
			if n == 0 {
				break
			}
			switch {
			case s.isDirty(e) || c != nil && c.holds(e):
			case e.used && pass == 0:
				e.used = false
			default:
				delete(s.cache, k)
				n--
			}
		}
	}
	// What could not be dropped stays until the next trim, a quarter of
	// the cache later.
	s.slack = max(0, len(s.cache)+s.maxCache/4-s.maxCache)
}

// maybeCompact compacts the store, in the background, once level 0 (the
// flushes since the last compaction) holds half as much as the levels
// below it, or 4 MiB when those are empty.
func (s *untyped) maybeCompact() {
	if s.compacting.Load() {
		return
	}
	m := kv.Pebble(s.db).Metrics()
	l0, rest := m.Levels[0].TablesSize, int64(0)
	for _, l := range m.Levels[1:] {
		rest += l.TablesSize
	}
	if l0 < max(rest/2, 4<<20) {
		return
	}
	s.compacting.Store(true)
	s.compacted.Add(1)
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	db := s.db
	go func() {
		defer s.compacted.Done()
		defer s.compacting.Store(false)
		// An error leaves the store as it was: the next one tries again.
		db.Compact(ctx, groupPrefix(s.start), []byte{prefixEnd}, false)
	}()
}

// batch encodes the changed values into a batch of writes to the store
// and counts them as written; nil when none changed.
func (s *Keyed[K, V]) batch() kv.Batch {
	if len(s.dirty) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	for _, e := range s.dirty {
		key := s.storeKey(e.key)
		var err error
		if e.deleted {
			err = b.Delete(key)
		} else {
			s.val.Reset()
			if s.codec.TTL > 0 {
				s.val.Varint(e.ts)
			}
			s.codec.EncodeValue(&s.val, e.val)
			if err = s.val.Err(); err != nil {
				b.Close()
				s.fail(fmt.Sprintf("encode the value of %v", e.key), err)
			}
			err = b.Set(key, s.val.Bytes())
		}
		if err != nil {
			b.Close()
			s.fail("write", err)
		}
		e.gen = 0 // in the store (no capture is pending: the store is not frozen)
	}
	if s.files.budget.values != 0 {
		// The cache's sizes follow the size of the values written.
		s.maxCache, s.spillAt = s.files.budget.cacheSizes(int(b.Len()) / len(s.dirty))
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
	return b
}

// waitCapture waits until the checkpoint being taken of the store is
// taken (its files may still be being copied).
func (s *Keyed[K, V]) waitCapture() {
	if c := s.capture; c != nil {
		select {
		case <-c.taken:
		case <-s.t.Context().Done():
			fault.Abort(fault.ErrCanceled)
		}
	}
}

// Len is the number of keys. It reads the whole store.
func (s *Keyed[K, V]) Len() int {
	n := 0
	for range s.All {
		n++
	}
	return n
}

// All calls yield for every key and value, in the store's order, until
// yield returns false; expired values (state TTL) are left out. The values are decoded from the store: changing
// them changes nothing (All is for reading: the results at the end of the
// input).
func (s *Keyed[K, V]) All(yield func(K, *V) bool) {
	s.spill(true)
	s.each(func(key, val []byte) bool {
		k := s.codec.DecodeKey(codec.NewReader(key))
		r := codec.NewReader(val)
		if s.codec.TTL > 0 && s.expired(r.Varint()) {
			return true
		}
		v := s.codec.DecodeValue(r)
		if err := r.Err(); err != nil {
			s.fail(fmt.Sprintf("decode the value of %v", k), err)
		}
		return yield(k, v)
	})
}

// each hands fn every key of the store (without its key group) and its
// value, in order, until fn returns false.
func (s *untyped) each(fn func(key, val []byte) bool) {
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: groupPrefix(s.start), UpperBound: groupPrefix(s.end)})
	if err != nil {
		s.fail("read", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		val, err := it.ValueAndErr()
		if err != nil {
			s.fail("read", err)
		}
		if !fn(it.Key()[2:], val) {
			return
		}
	}
	if err := it.Error(); err != nil {
		s.fail("read", err)
	}
}

var _ state.Keyed[string, int] = (*Keyed[string, int])(nil)

// files is where a store keeps its files, and how they move to and from
// the checkpoint directory: on the operating system's file system the
// store is in the checkpoint directory's folder pebble/ and files move by
// hard links; on another (an in-memory one, in tests), the store is in
// memory and files are copied.
type files struct {
	ckpt  vfs.FS
	fs    pvfs.FS
	dir   string
	local bool
	// budget sizes the stores opened (budget.go).
	budget budget
	// comparer orders the store's keys, nil for Pebble's default.
	comparer *pebble.Comparer
}

func newFiles(ckpt vfs.FS, dir string) *files {
	if ckpt == vfs.Default {
		return &files{ckpt: ckpt, fs: pvfs.Default, dir: dir, local: true, budget: unbounded}
	}
	return &files{ckpt: ckpt, fs: pvfs.NewMem(), dir: "/store", budget: unbounded}
}

// reset empties the working folder: what a run left there is never used.
func (f *files) reset() error {
	if err := f.fs.RemoveAll(f.dir); err != nil {
		return err
	}
	return f.fs.MkdirAll(f.dir, 0o755)
}

func (f *files) removeAll() { f.fs.RemoveAll(f.dir) }
