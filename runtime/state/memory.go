package state

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/invariants"
)

// Keyed is one value of type V per key of type K.
type Keyed[K comparable, V any] interface {
	// Get returns the value of k, or nil when k has none. The value may be
	// changed through the pointer until the next record: the backend
	// counts a key that Get returned as changed.
	Get(k K) *V
	// Put makes v the value of k: the backend keeps the pointer.
	Put(k K, v *V)
	// GetOrAdd returns the value of k, as Get does, or when k has none
	// makes a zero value k's and returns it, with added set: Get, then
	// Put of a new value when Get returned nil, in one call.
	GetOrAdd(k K) (v *V, added bool)
	// Delete removes k and its value.
	Delete(k K)
	// Len is the number of keys.
	Len() int
	// All calls yield for every key and value, in no particular order,
	// until yield returns false.
	All(yield func(K, *V) bool)
}

// Codec is how the keys and values of one keyed state are hashed and
// written: pipegen generates one per keyed node, from the generated
// serializers of its types.
type Codec[K comparable, V any] struct {
	// Hash decides a key's key group.
	Hash        func(K) uint64
	EncodeKey   func(*codec.Writer, K)
	DecodeKey   func(*codec.Reader) K
	EncodeValue func(*codec.Writer, *V)
	DecodeValue func(*codec.Reader) *V
	// DecodeValueTo, if set, is DecodeValue into a value the caller
	// provides, which is zero: a restore then takes its values from
	// slabs, with their entries, rather than allocate each.
	DecodeValueTo func(*codec.Reader, *V)
	// TTL, in milliseconds, makes values expire that long after their
	// last write (state-ttl); 0 for never. The written values then carry
	// their write times.
	TTL int64
	// KeySchema and ValueSchema describe the types, field ids included;
	// checkpoints record them.
	KeySchema, ValueSchema string
}

// Memory keeps keyed state on the heap, its entries found by an index
// (a Go map, or a table of its own once the state is large: index.go),
// and knows which keys changed since a checkpoint, so that a checkpoint
// can write only those (a delta) instead of every key.
//
// Changes are counted per epoch: the time between two checkpoint
// barriers. The first time in an epoch that a key is read for a change
// (Get, Put, Delete), its entry is stamped with the epoch and added to the
// epoch's list of changed entries; later accesses in the epoch cost one
// comparison. A snapshot (Capture) closes the epoch and is encoded by
// another goroutine while the subtask goes on: an entry that the subtask
// is about to change before the encoder has reached it is encoded first,
// by the subtask (copy on write), so that the snapshot holds every value
// as it was at the barrier. The subtask therefore never stops for longer
// than it takes to close an epoch.
type Memory[K comparable, V any] struct {
	// idx finds the live entries by key (index.go).
	idx index[K, V]
	// keyGroup and start place a key in the lists of its key group;
	// Bind sets them.
	keyGroup func(K) int
	start    int
	// all holds, per key group of the subtask's range, every entry added
	// and not compacted away since (deleted ones included), oldest
	// first; dead counts the deleted ones.
	all  [][]*entry[K, V]
	dead []int
	// epoch is the current epoch; every entry touched in it has ver ==
	// epoch. Epoch 0 is the state as restored.
	epoch uint64
	// tracking is set once changes must be listed: after the first
	// capture, or after a restore whose files a delta may build on.
	tracking bool
	// dirty lists the entries first touched in the current epoch;
	// pending the lists of earlier epochs that a later delta may need.
	// gone counts the entries of dirty that were added and deleted in
	// the current epoch (unlistDead takes them off).
	dirty   []*entry[K, V]
	pending []epochList[K, V]
	gone    int
	// snap is the capture being encoded, nil when none.
	snap *Capture[K, V]
	// fresh holds the entries, with their values, that getOrAdd has
	// allocated for new keys and not used yet (freshSlab); free holds
	// such entries of deleted keys that nothing refers to any more
	// (compact), for getOrAdd to use again first.
	fresh []restored[K, V]
	free  []*restored[K, V]
	// iterating counts the All calls under way: compact then leaves the
	// lists they read as they are.
	iterating int
	// slab holds the entries a restore has allocated and not used yet,
	// vslab the same with their values (Codec.DecodeValueTo); reserved
	// is about how many more it will use (Reserve). strs holds the
	// strings the restore decodes. batch holds the entries of full
	// sections restored and not in the index's table yet, and batchTmp
	// is build's room to sort them.
	slab            []entry[K, V]
	vslab           []restored[K, V]
	reserved        int
	strs            codec.Strings
	batch, batchTmp []slot[K, V]
	// deltas holds the operations of deltas restored and not applied to
	// the table yet (applyDeltas), deltasTmp is room to sort them, and
	// spare the pairs of entries and values they decoded and no longer
	// need, for the next ones.
	deltas, deltasTmp []deltaOp[K, V]
	spare             []*restored[K, V]
	// ttl is the state's time to live in milliseconds, 0 for none
	// (SetTTL; ttl.go); sweep is where the next sweep for expired
	// entries starts.
	ttl   int64
	now   func() int64 // processing time (SetClock); nil: the package's clock
	sweep sweepCursor
	// swept, if set, is told the keys a sweep deletes (a map state's
	// index).
	swept func(K)
	// onDeleteAux, if set, gets the aux word of an entry that Delete
	// removes (OnDeleteAux).
	onDeleteAux func(K, uint64)
}

type epochList[K comparable, V any] struct {
	epoch   uint64
	entries []*entry[K, V]
}

// entry is one key's value and its bookkeeping.
type entry[K comparable, V any] struct {
	key K
	val *V
	// ver is the epoch the entry was last touched in (the subtask's
	// goroutine only).
	ver uint64
	// capt is the epoch of the newest capture that holds the entry as it
	// was at its barrier, or that the entry is newer than; busy is set
	// while one side encodes it.
	capt    atomic.Uint64
	kg      int32
	deleted bool
	// fresh is set while the entry has not been touched since the epoch
	// its key was added in, ver: deleted too, it was added and deleted
	// in epoch ver, and a delta after an earlier epoch leaves it out.
	fresh bool
	// dropped is set when compact took the deleted entry off its key
	// group's list while a list of changes still held it.
	dropped bool
	// own is set when the entry is the first field of a restored that
	// getOrAdd made, its value beside it (val points there unless Put
	// replaced it): compact may hand it to getOrAdd again once the key is
	// deleted and no list refers to it.
	own bool
	// ts is the processing time (Unix milliseconds) of the entry's last
	// write, kept with a ttl only.
	ts int64
	// aux is what the operator keeps with the key beside its value (a
	// process operator's timers of the key: eventtime.TimerService), so
	// that the lookup of the value finds it too (GetOrAddRef): a number,
	// 0 for none, not a pointer, that it costs the garbage collector
	// nothing. It is not part of the state's checkpoints; Delete hands it
	// to onDeleteAux.
	aux uint64
}

// busy marks an entry's capt while it is being encoded.
const busy = 1 << 63

// setCapt sets capt with a plain store, for an entry that no capture can
// read: one just made, or handed back to getOrAdd (compact hands an entry
// back only when no capture is under way, unlistDead only one added after
// the last barrier). An atomic store is an exchange on amd64, which waits
// for every store before it, the new key's value among them: a quarter
// of q4's getOrAdd. TestMemoryChurnWithDeltas hands entries back in
// both ways while captures are written, and restores each chain to the
// state at its barrier (which an entry reused under a capture would
// break); run with -race it also checks that no capture reads capt then.
func (e *entry[K, V]) setCapt(v uint64) {
	*(*uint64)(unsafe.Pointer(&e.capt)) = v
}

// atomic.Uint64 is its counter and nothing else, which setCapt writes.
var _ = [1]struct{}{}[unsafe.Sizeof(atomic.Uint64{})-8]

// NewMemory returns an empty memory state.
func NewMemory[K comparable, V any]() *Memory[K, V] {
	return &Memory[K, V]{idx: newIndex[K, V](), epoch: 1}
}

// Bind sets the key groups of the subtask's range [start, end) and how a
// key's group is found. It is called once, before the state is used
// (RestoreMemory does).
func (s *Memory[K, V]) Bind(keyGroup func(K) int, start, end int) {
	s.keyGroup, s.start = keyGroup, start
	s.all = make([][]*entry[K, V], end-start)
	s.dead = make([]int, end-start)
}

// Get returns the value of k, or nil.
func (s *Memory[K, V]) Get(k K) *V {
	e := s.idx.get(k)
	if e == nil {
		return nil
	}
	if s.ttl > 0 && s.expired(e) {
		s.Delete(k)
		return nil
	}
	if e.ver != s.epoch {
		s.touch(e)
	}
	if s.ttl > 0 {
		e.ts = s.nowMillis() // the value may be changed: a write
	}
	return e.val
}

// Put makes v the value of k.
func (s *Memory[K, V]) Put(k K, v *V) {
	e, h := s.idx.lookup(k)
	if e != nil {
		if e.ver != s.epoch {
			s.touch(e)
		}
		e.val = v
		if s.ttl > 0 {
			e.ts = s.nowMillis()
		}
		return
	}
	s.insert(h, &entry[K, V]{key: k, val: v})
}

// GetOrAdd returns the value of k, as Get does, or when k has none makes
// a zero value k's and returns it (added set). It is Get, then new and
// Put when Get found nothing, with one lookup of k instead of two, and
// the entry and its value allocated together: what a keyed operator does
// with every record.
func (s *Memory[K, V]) GetOrAdd(k K) (v *V, added bool) {
	e, added := s.getOrAdd(k)
	return e.val, added
}

// Ref is the entry of a key as GetOrAddRef found or made it, for its aux
// word and for DeleteRef. It stays the key's until the key is deleted.
// The caller keeps it in a variable of its own for the call about the
// key: a pointer that the state kept instead, stored at every record, was
// a write barrier a record while the garbage collector marks (2-3% of
// q4's CPU).
type Ref[K comparable, V any] struct{ e *entry[K, V] }

// Aux is the aux word of the entry: a number that the caller may set (0
// is none), kept with the key's value until Delete removes the key
// (OnDeleteAux).
func (r Ref[K, V]) Aux() uint64 { return r.e.aux }

// SetAux sets the aux word of the entry.
func (r Ref[K, V]) SetAux(a uint64) { r.e.aux = a }

// GetOrAddRef is GetOrAdd that also returns k's entry: its aux word, and
// DeleteRef deletes k without looking it up again, as a process operator
// does after a call that cleared k's state.
func (s *Memory[K, V]) GetOrAddRef(k K) (*V, Ref[K, V]) {
	e, _ := s.getOrAdd(k)
	return e.val, Ref[K, V]{e}
}

// getOrAdd returns the entry of k, made with a zero value when k has
// none (added set).
func (s *Memory[K, V]) getOrAdd(k K) (_ *entry[K, V], added bool) {
	e, h := s.idx.lookup(k)
	if e != nil {
		if s.ttl == 0 || !s.expired(e) {
			if e.ver != s.epoch {
				s.touch(e)
			}
			if s.ttl > 0 {
				e.ts = s.nowMillis() // the value may be changed: a write
			}
			return e, false
		}
		s.Delete(k) // expired: as if it had none (k's hash stays h)
	}
	var p *restored[K, V]
	if n := len(s.free); n > 0 {
		p = s.free[n-1]
		s.free[n-1] = nil
		s.free = s.free[:n-1]
		p.reset()
	} else {
		if len(s.fresh) == 0 {
			s.fresh = make([]restored[K, V], freshSlab[K, V]())
		}
		p = &s.fresh[0]
		s.fresh = s.fresh[1:]
	}
	p.e.key = k
	p.e.val = &p.v
	p.e.own = true
	s.insert(h, &p.e)
	return &p.e, true
}

// reset makes a deleted entry and its value zero, for a new key, but for
// capt, which the insert that follows it sets (setCapt): only a state
// bound to key groups hands entries back (compact, unlistDead), and its
// insert always sets capt.
func (p *restored[K, V]) reset() {
	var zk K
	var zv V
	e := &p.e
	e.key, e.val, e.ver, e.kg, e.deleted, e.own, e.ts, e.aux = zk, nil, 0, 0, false, false, 0, 0
	e.fresh, e.dropped = false, false
	p.v = zv
}

// freshSlab is how many new keys' entries, each with its value, getOrAdd
// allocates at once: about 4 KiB of them, at least one. One allocation
// for many keys costs the allocator and the collector less than one each
// (q4 makes a key for every auction); a slab stays on the heap as long as
// one of its entries is referenced, as a restore's do.
func freshSlab[K comparable, V any]() int {
	return max(1, 512/int(unsafe.Sizeof(restored[K, V]{})))
}

// OnDeleteAux makes f get the key and the aux word (GetOrAddAux) of every
// entry that Delete removes, one that expired included, whose word is set
// (not 0): what the word stands for then lives apart from the state.
func (s *Memory[K, V]) OnDeleteAux(f func(k K, aux uint64)) { s.onDeleteAux = f }

// insert adds e, the entry of a key that has none (h is idx.lookup's),
// with its value set.
func (s *Memory[K, V]) insert(h uint64, e *entry[K, V]) {
	e.ver, e.fresh = s.epoch, true
	if s.all == nil {
		// Not bound to key groups (a test's state): a plain map, which
		// Snapshot can still write.
		e.kg = -1
		s.idx.add(h, e)
		return
	}
	kg := s.keyGroup(e.key)
	i := kg - s.start
	if i < 0 || i >= len(s.all) {
		panic(fmt.Sprintf("state.Memory: key %v is in key group %d, outside this subtask's range [%d, %d)", e.key, kg, s.start, s.start+len(s.all)))
	}
	e.kg = int32(kg)
	if s.ttl > 0 {
		e.ts = s.nowMillis()
	}
	// Not part of any capture under way: it is newer than its barrier.
	e.setCapt(s.epoch - 1)
	s.idx.add(h, e)
	s.all[i] = append(s.all[i], e)
	if s.tracking {
		s.dirty = append(s.dirty, e)
	}
}

// Delete removes k.
func (s *Memory[K, V]) Delete(k K) {
	if e := s.idx.remove(k); e != nil {
		s.deleted(e)
	}
}

// DeleteRef removes the key of r (GetOrAddRef), if it was not deleted
// since: Delete with one lookup of the key in a map where it takes two.
func (s *Memory[K, V]) DeleteRef(r Ref[K, V]) {
	e := r.e
	if e.deleted {
		return
	}
	s.idx.drop(e.key)
	s.deleted(e)
}

// deleted marks e, just taken out of the index, deleted.
func (s *Memory[K, V]) deleted(e *entry[K, V]) {
	if e.ver != s.epoch {
		s.touch(e)
	}
	e.deleted, e.val = true, nil
	if e.fresh && s.tracking && e.kg >= 0 {
		// Added and deleted in this epoch: no delta needs it.
		s.gone++
		if s.gone > 1024 && 2*s.gone > len(s.dirty) {
			s.unlistDead()
		}
	}
	if a := e.aux; a != 0 {
		e.aux = 0
		if s.onDeleteAux != nil {
			s.onDeleteAux(e.key, a)
		}
	}
	if e.kg < 0 {
		return
	}
	i := int(e.kg) - s.start
	s.dead[i]++
	if s.dead[i] > 16 && s.dead[i] > len(s.all[i])/2 && s.idle() {
		s.compact(i)
	}
}

// compact drops the deleted entries of key group start+i, when no
// capture is being encoded (idle). It compacts the list in place, unless
// an All reads it (then it makes a new one), and hands the entries that
// getOrAdd made and that no list of changes holds (recyclable) to it
// again: a key that comes and goes (q4's auctions, 128 bytes each with
// the value) then costs no allocation, and the collector runs less often.
func (s *Memory[K, V]) compact(i int) {
	list := s.all[i]
	live := list[:0]
	if s.iterating > 0 {
		live = make([]*entry[K, V], 0, len(list)-s.dead[i])
	}
	listed := s.listedSince()
	for _, e := range list {
		switch {
		case !e.deleted:
			live = append(live, e)
		case e.own && e.ver < listed && s.iterating == 0:
			s.free = append(s.free, (*restored[K, V])(unsafe.Pointer(e)))
		default:
			e.dropped = true
		}
	}
	if s.iterating == 0 {
		clear(list[len(live):])
	}
	s.all[i], s.dead[i] = live, 0
}

// unlistDead takes the entries added and deleted in the current epoch off
// its list of changes: a key that comes and goes within an epoch (q4's
// auctions: half a million a second) is then in no list, its entry is
// given to a new key again (compact, or here if compact dropped it
// already), and the list stays about as long as the keys that stay. Each
// such entry has been listed once, when its key was added, at the
// epoch's end of the list: no entry of another key is listed after it
// on its account, so the list keeps the order of the changes.
func (s *Memory[K, V]) unlistDead() {
	kept := s.dirty[:0]
	for _, e := range s.dirty {
		if !(e.deleted && e.fresh && e.ver == s.epoch) {
			kept = append(kept, e)
			continue
		}
		// In no list of changes now: compact hands it to getOrAdd
		// again (ver 0 is before every list), or hands it here if it
		// took it off its key group's list already.
		e.ver = 0
		if e.dropped && e.own && s.iterating == 0 {
			s.free = append(s.free, (*restored[K, V])(unsafe.Pointer(e)))
		}
	}
	clear(s.dirty[len(kept):])
	s.dirty = kept
	s.gone = 0
}

// listedSince is the oldest epoch whose list of changes the state keeps
// (dirty, pending): an entry last touched before it is in none of them,
// every list that holds an entry being of an epoch it was touched in.
func (s *Memory[K, V]) listedSince() uint64 {
	if !s.tracking && len(s.pending) == 0 {
		return math.MaxUint64
	}
	oldest := s.epoch
	for _, l := range s.pending {
		oldest = min(oldest, l.epoch)
	}
	return oldest
}

// Len is the number of keys.
func (s *Memory[K, V]) Len() int { return s.idx.len() }

// All calls yield for every key and value. The values are not counted as
// changed: All is for reading (the results at the end of the input).
// Expired values (ttl) are left out. The entries are read from the key
// groups' lists (the index's for a state not bound), so that yield may
// change the state: what it deletes and has not been yielded yet is left
// out, what it adds may or may not be yielded.
func (s *Memory[K, V]) All(yield func(K, *V) bool) {
	s.iterating++
	defer func() { s.iterating-- }()
	live := func(e *entry[K, V]) bool {
		if e.deleted || s.ttl > 0 && s.expired(e) {
			return true
		}
		return yield(e.key, e.val)
	}
	if s.all == nil {
		var es []*entry[K, V]
		s.idx.all(func(e *entry[K, V]) bool { es = append(es, e); return true })
		for _, e := range es {
			if !live(e) {
				return
			}
		}
		return
	}
	for _, list := range s.all {
		for _, e := range list {
			if !live(e) {
				return
			}
		}
	}
}

var _ Keyed[string, int] = (*Memory[string, int])(nil)

// touch is an entry's first access in the epoch: it is listed as changed
// and, if the capture under way still needs its value as it was at the
// barrier, encoded for it first.
func (s *Memory[K, V]) touch(e *entry[K, V]) {
	if c := s.snap; c != nil {
		if c.finished.Load() {
			s.snap = nil
		} else if e.capt.Load()&^busy < c.Epoch && (c.Full || e.ver > c.since) {
			c.preImage(e)
		}
	}
	e.ver, e.fresh = s.epoch, false
	if s.tracking {
		s.dirty = append(s.dirty, e)
	}
}

// idle reports whether no capture is being encoded.
func (s *Memory[K, V]) idle() bool {
	if s.snap != nil && s.snap.finished.Load() {
		s.snap = nil
	}
	return s.snap == nil
}

// InFlight returns a channel closed when the capture being encoded is
// done, or nil when there is none. Capture may be called only when it is
// nil or closed.
func (s *Memory[K, V]) InFlight() <-chan struct{} {
	if s.idle() {
		return nil
	}
	return s.snap.done
}

// Epoch is the current epoch: what Capture will close.
func (s *Memory[K, V]) Epoch() uint64 { return s.epoch }

// Capture closes the current epoch and returns the state as it is now,
// for another goroutine to encode (Write) while the subtask goes on. A
// full capture holds every key; a delta only the keys touched after epoch
// since (their values, or their deletion), for a checkpoint that builds on
// one that captured epoch since. The lists of changes of epochs up to keep
// are dropped: no delta will need them (the checkpoint that captured epoch
// keep is complete).
func (s *Memory[K, V]) Capture(full bool, since, keep uint64, c *Codec[K, V]) *Capture[K, V] {
	if !s.idle() {
		panic("state.Memory: Capture while the previous capture is being encoded")
	}
	if s.all == nil {
		panic("state.Memory: Capture before Bind")
	}
	if invariants.On {
		s.check()
	}
	cp := &Capture[K, V]{Epoch: s.epoch, Full: full, Keys: s.idx.len(), since: since, start: s.start, codec: c, done: make(chan struct{}),
		side: make([]codec.Writer, len(s.all))}
	if s.tracking {
		s.pending = append(s.pending, epochList[K, V]{epoch: s.epoch, entries: s.dirty})
	}
	// The next epoch lists about as many changes.
	s.dirty = make([]*entry[K, V], 0, len(s.dirty))
	s.gone = 0
	kept := s.pending[:0]
	for _, l := range s.pending {
		if l.epoch > keep {
			kept = append(kept, l)
		}
	}
	clear(s.pending[len(kept):])
	s.pending = kept
	if full {
		cp.lists = make([][]*entry[K, V], len(s.all))
		copy(cp.lists, s.all) // the entries now; later ones go past each list's end
	} else {
		for _, l := range s.pending {
			if l.epoch > since {
				cp.changed = append(cp.changed, l.entries)
			}
		}
	}
	s.tracking = true
	s.epoch++
	s.snap = cp
	return cp
}

// Track makes the state list its changes from now on: a delta may be
// taken on top of the files it was restored from.
func (s *Memory[K, V]) Track() { s.tracking = true }

// Capture is keyed state as it was at a barrier, encoded by Write while
// the subtask goes on changing it.
type Capture[K comparable, V any] struct {
	// Epoch is the epoch the capture closed; Full is set when it holds
	// every key, else it holds the changes after epoch since.
	Epoch uint64
	Full  bool
	// Keys is the number of keys the state held at the barrier.
	Keys  int
	since uint64
	start int
	codec *Codec[K, V]
	// lists are a full capture's entries per key group, changed the
	// changed entries of a delta, by epoch.
	lists   [][]*entry[K, V]
	changed [][]*entry[K, V]
	// side holds, per key group, the entries that the subtask encoded
	// before changing them (mu guards it); sideN counts them, and n the
	// entries Write encoded.
	mu       sync.Mutex
	side     []codec.Writer
	sideN, n int
	// finished is set, and done closed, once Write or Abandon is over.
	finished atomic.Bool
	done     chan struct{}
}

// claim makes the calling side the one that encodes e for the capture: it
// returns false when e is encoded already (or being encoded, in which case
// it waits until that is over).
func (c *Capture[K, V]) claim(e *entry[K, V]) bool {
	for {
		v := e.capt.Load()
		switch {
		case v&busy != 0:
			runtime.Gosched()
		case v >= c.Epoch:
			return false
		case e.capt.CompareAndSwap(v, v|busy):
			return true
		}
	}
}

// preImage encodes e as it is, before the subtask changes it.
func (c *Capture[K, V]) preImage(e *entry[K, V]) {
	if !c.claim(e) {
		return
	}
	c.mu.Lock()
	if c.encode(&c.side[int(e.kg)-c.start], e) {
		c.sideN++
	}
	c.mu.Unlock()
	e.capt.Store(c.Epoch)
}

// encode writes one entry: a full capture's key and value; a delta's
// operation (0 a value, 1 a deletion) first. It reports whether it wrote
// anything.
func (c *Capture[K, V]) encode(w *codec.Writer, e *entry[K, V]) bool {
	if c.Full && e.deleted {
		return false // deleted before the barrier
	}
	if !c.Full && e.deleted && e.fresh && e.ver > c.since {
		return false // added after the base, and deleted: never written
	}
	mark := w.Begin()
	if !c.Full {
		if e.deleted {
			w.Uvarint(deltaDelete)
			c.codec.EncodeKey(w, e.key)
			w.End(mark)
			return true
		}
		w.Uvarint(deltaPut)
	}
	c.codec.EncodeKey(w, e.key)
	if c.codec.TTL > 0 {
		w.Varint(e.ts)
	}
	c.codec.EncodeValue(w, e.val)
	w.End(mark)
	return true
}

// The operations of a delta's entries.
const (
	deltaPut    = 0
	deltaDelete = 1
)

// Write encodes the capture, calling section once per key group of the
// subtask's range, in order, with the bytes of that key group's section in
// parts (valid until section returns). It returns the first error of
// section or of the encoders.
func (c *Capture[K, V]) Write(section func(parts ...[]byte) error) (err error) {
	defer c.finish()
	n := len(c.side)
	var byGroup [][]*entry[K, V]
	if c.Full {
		byGroup = c.lists
	} else {
		// The changes of every epoch, grouped by key group, in the order
		// they happened (a deletion and a new value of the same key keep
		// their order).
		counts := make([]int, n+1)
		for _, l := range c.changed {
			for _, e := range l {
				counts[int(e.kg)-c.start+1]++
			}
		}
		for i := 1; i <= n; i++ {
			counts[i] += counts[i-1]
		}
		flat := make([]*entry[K, V], counts[n])
		for _, l := range c.changed {
			for _, e := range l {
				i := int(e.kg) - c.start
				flat[counts[i]] = e
				counts[i]++
			}
		}
		byGroup = make([][]*entry[K, V], n)
		prev := 0
		for i := range n {
			byGroup[i] = flat[prev:counts[i]]
			prev = counts[i]
		}
	}
	w := codec.NewWriter(nil)
	for i := range n {
		w.Reset()
		list := byGroup[i]
		for len(list) > 0 {
			batch := list[:min(len(list), fetchAhead)]
			list = list[len(batch):]
			fetch(batch)
			for _, e := range batch {
				if c.claim(e) {
					if c.encode(w, e) {
						c.n++
					}
					e.capt.Store(c.Epoch)
				}
			}
		}
		if err := w.Err(); err != nil {
			return err
		}
		// Every entry of the group is encoded now, by one side or the
		// other: the subtask adds nothing more to its side buffer.
		c.mu.Lock()
		side := c.side[i].Bytes()
		serr := c.side[i].Err()
		c.side[i] = codec.Writer{}
		c.mu.Unlock()
		if serr != nil {
			return serr
		}
		if err := section(w.Bytes(), side); err != nil {
			return err
		}
	}
	return nil
}

// fetchAhead is how many entries Write reads before it claims the first
// of them: claim's compare-and-swap waits for every load before it, so
// the entries, which are scattered over the heap, would be fetched one
// at a time; read first, their fetches overlap.
const fetchAhead = 16

// fetch reads each entry's capture epoch, to have the entries in the
// cache. (Only capt: the subtask may be changing the rest. The compiler
// keeps an atomic load whose value is not used.)
func fetch[K comparable, V any](es []*entry[K, V]) {
	for _, e := range es {
		e.capt.Load()
	}
}

// Entries is the number of entries Write wrote (a full capture's keys, a
// delta's values and deletions), once it is over.
func (c *Capture[K, V]) Entries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n + c.sideN
}

// Abandon gives the capture up without encoding it (its checkpoint
// failed): the subtask stops encoding for it.
func (c *Capture[K, V]) Abandon() { c.finish() }

func (c *Capture[K, V]) finish() {
	if c.finished.CompareAndSwap(false, true) {
		c.lists, c.changed = nil, nil
		close(c.done)
	}
}

// Reserve makes room for about n keys in a state that holds none yet: a
// restore that knows how many keys its files hold fills an index of the
// right size instead of growing one, and takes their entries from slabs
// (of at most restoreSlab) instead of one by one.
func (s *Memory[K, V]) Reserve(n int) {
	if s.idx.len() > 0 || n <= 0 {
		return
	}
	s.idx.reserve(n)
	s.reserved = n
	// The lists of the key groups, which the keys spread over evenly
	// (a hash decides a key's group), with a little room to spare:
	// growing them would copy each list about twice.
	if groups := len(s.all); groups > 0 {
		per := n / groups
		for i := range s.all {
			if s.all[i] == nil {
				s.all[i] = make([]*entry[K, V], 0, per+per/16+8)
			}
		}
	}
}

// restoreBatch is the most entries of full sections a restore holds
// before it adds them to the table (build): sorted, they are written
// into the table front to back, a few slots apart, at a cost in memory
// of 32 bytes per entry of the batch (the batch and build's copy). A
// restore batches a quarter of the keys it expects, within these
// bounds: the larger a batch, the more of its entries share the cache
// lines of the table they are written to. Batches of up to 1M entries
// rather than 256K (an eighth of the keys) took 3% less CPU in a
// restore of 5M keys per subtask (three pairs of runs), for 24 MB more
// while it lasts. deltaBatch is the same bound for the operations of
// deltas (addDelta), an eighth of the keys.
const (
	restoreBatchMin = 1 << 12
	restoreBatch    = 1 << 20
	deltaBatch      = 1 << 18
)

// flush adds the entries of full sections restored so far to the table.
func (s *Memory[K, V]) flush() {
	if len(s.batch) == 0 {
		return
	}
	if len(s.batchTmp) < len(s.batch) {
		s.batchTmp = make([]slot[K, V], cap(s.batch))
	}
	// The entries are the table's now: the batches' copies of them keep
	// nothing alive longer (Restored drops both).
	s.idx.t.build(s.batch, s.batchTmp)
	s.batch = s.batch[:0]
}

// restoreSlab is the most entries a restore allocates at once: a slab
// stays on the heap as long as one of its entries is in the state, so
// that deleting keys frees memory a slab at a time.
const restoreSlab = 256

// newEntry returns a zero entry for a restore, from the current slab.
func (s *Memory[K, V]) newEntry() *entry[K, V] {
	if len(s.slab) == 0 {
		s.slab = make([]entry[K, V], min(max(s.reserved, 16), restoreSlab))
	}
	e := &s.slab[0]
	s.slab = s.slab[1:]
	s.reserved--
	return e
}

// restored is an entry and its value, allocated together by a restore.
type restored[K comparable, V any] struct {
	e entry[K, V]
	v V
}

// newValued returns an entry for a restore whose value is zero, both
// from the current slab of entries with their values: one allocation
// for restoreSlab keys, where decoders that return a value allocate one
// per key. A value replaced later stays on the heap with its slab, as
// an entry does.
func (s *Memory[K, V]) newValued() *restored[K, V] {
	if n := len(s.spare); n > 0 {
		p := s.spare[n-1]
		s.spare = s.spare[:n-1]
		p.e.val = &p.v
		return p
	}
	if len(s.vslab) == 0 {
		s.vslab = make([]restored[K, V], min(max(s.reserved, 16), restoreSlab))
	}
	p := &s.vslab[0]
	s.vslab = s.vslab[1:]
	s.reserved--
	p.e.val = &p.v
	return p
}

// RestoreSection adds the entries of key group kg's section of a state
// file: a full one, or a delta on top of what was restored before it. The
// section is not kept. Restored ends the restore.
func (s *Memory[K, V]) RestoreSection(kg int, section []byte, delta bool, c *Codec[K, V]) error {
	i := kg - s.start
	if delta {
		// A delta changes keys that full sections restored.
		s.flush()
	} else {
		// A full section after deltas is another chain's (a restore at
		// another parallelism): its keys are apart, but it finds the
		// index up to date all the same.
		s.applyDeltas()
	}
	// The deltas of a large state are applied in batches, in the order
	// of the table's slots (applyDeltas).
	batchDeltas := delta && s.idx.big
	r := codec.NewReader(section)
	// The strings of the section are copied into chunks of memory, not
	// allocated one by one.
	r.UseStrings(&s.strs)
	// One reader of the entries, not one allocated per entry.
	er := new(codec.Reader)
	for r.More() {
		r.NestedTo(er)
		op := uint64(deltaPut)
		if delta {
			op = er.Uvarint()
		}
		k := c.DecodeKey(er)
		switch op {
		case deltaPut:
			var ts int64
			if c.TTL > 0 {
				ts = er.Varint()
			}
			if batchDeltas {
				e, p := s.decodeEntry(er, c)
				if er.Err() != nil {
					break
				}
				e.key, e.kg, e.ts = k, int32(kg), ts
				s.addDelta(k, e, p)
				continue
			}
			if delta {
				// A full section holds each of its group's keys once, and
				// before any delta: only a delta changes a key restored.
				e, h := s.idx.lookup(k)
				if e == nil {
					if e, _ = s.decodeEntry(er, c); er.Err() != nil {
						break
					}
					e.key, e.kg = k, int32(kg)
					s.all[i] = append(s.all[i], e)
					s.idx.add(h, e)
				} else if c.DecodeValueTo != nil {
					// Nothing else holds the value of a restored entry:
					// it is decoded again in place.
					var zero V
					*e.val = zero
					c.DecodeValueTo(er, e.val)
				} else {
					e.val = c.DecodeValue(er)
				}
				e.ts = ts
				continue
			}
			e, _ := s.decodeEntry(er, c)
			if er.Err() != nil {
				break
			}
			e.key, e.kg, e.ts = k, int32(kg), ts
			s.all[i] = append(s.all[i], e)
			if !s.idx.big {
				s.idx.add(0, e)
				continue
			}
			if s.batch == nil {
				s.batch = make([]slot[K, V], 0, min(max(s.reserved/4, restoreBatchMin), restoreBatch))
			}
			s.batch = append(s.batch, slot[K, V]{s.idx.t.hash(k), e})
			if len(s.batch) == cap(s.batch) {
				s.flush()
			}
		case deltaDelete:
			if batchDeltas {
				if er.Err() == nil {
					s.addDelta(k, nil, nil)
				}
				break
			}
			if e := s.idx.remove(k); e != nil {
				e.deleted, e.val = true, nil
				s.dead[i]++
			}
		default:
			er.Fail("unknown operation %d", op)
		}
		if er.Err() != nil {
			break
		}
	}
	return r.Err()
}

// deltaOp is an operation of a delta that a restore holds: a new value
// of key k, its entry e (and p, e's pair with its value, if it has one),
// or the deletion of k when e is nil; h is k's hash.
type deltaOp[K comparable, V any] struct {
	h uint64
	k K
	e *entry[K, V]
	p *restored[K, V]
}

// addDelta holds an operation of a delta, to be applied with the next
// ones (applyDeltas): a delta's keys are spread over the whole table,
// where a lookup each takes a cache miss, most of a restore's time
// in a delta. It holds an eighth of the keys, at most deltaBatch: the
// more, the closer their lookups in the table.
func (s *Memory[K, V]) addDelta(k K, e *entry[K, V], p *restored[K, V]) {
	if s.deltas == nil {
		s.deltas = make([]deltaOp[K, V], 0, min(max(s.idx.len()/8, restoreBatchMin), deltaBatch))
	}
	s.deltas = append(s.deltas, deltaOp[K, V]{h: s.idx.t.hash(k), k: k, e: e, p: p})
	if len(s.deltas) == cap(s.deltas) {
		s.applyDeltas()
	}
}

// applyDeltas applies the operations of deltas held, sorted by their
// keys' homes in the table as build sorts (a stable sort: the operations
// of one key keep their order), so that their lookups go through the
// table front to back. A new value of a key restored already that was
// decoded into a pair from a slab is copied into the key's value, and
// the pair is used again for the next delta.
func (s *Memory[K, V]) applyDeltas() {
	ops := s.deltas
	if len(ops) == 0 {
		return
	}
	if len(ops) >= 1<<sortBits {
		if len(s.deltasTmp) < len(ops) {
			s.deltasTmp = make([]deltaOp[K, V], cap(ops))
		}
		ops = sortByHome(ops, s.deltasTmp, func(op *deltaOp[K, V]) uint64 { return op.h })
	}
	t := &s.idx.t
	for _, op := range ops {
		e, _ := t.lookupHash(op.k, op.h)
		switch {
		case op.e == nil:
			if e != nil {
				t.remove(op.k)
				e.deleted, e.val = true, nil
				s.dead[int(e.kg)-s.start]++
			}
		case e == nil:
			s.all[int(op.e.kg)-s.start] = append(s.all[int(op.e.kg)-s.start], op.e)
			t.add(op.h, op.e)
		default:
			e.ts = op.e.ts
			if p := op.p; p != nil {
				*e.val = p.v
				*p = restored[K, V]{}
				s.spare = append(s.spare, p)
			} else {
				e.val = op.e.val
			}
		}
	}
	clear(s.deltas)
	clear(s.deltasTmp)
	s.deltas = s.deltas[:0]
}

// decodeEntry returns a new entry of a restore with its value read from
// r, its key and key group not set yet, and the pair of entry and value
// it is part of, nil when the value was allocated apart.
func (s *Memory[K, V]) decodeEntry(r *codec.Reader, c *Codec[K, V]) (*entry[K, V], *restored[K, V]) {
	if c.DecodeValueTo == nil {
		e := s.newEntry()
		e.val = c.DecodeValue(r)
		return e, nil
	}
	p := s.newValued()
	c.DecodeValueTo(r, &p.v)
	return &p.e, p
}

// Restored ends a restore: the lists of key groups with many deleted
// entries are compacted.
func (s *Memory[K, V]) Restored() {
	s.flush()
	s.applyDeltas()
	s.slab, s.vslab, s.reserved = nil, nil, 0
	s.deltas, s.deltasTmp, s.spare = nil, nil, nil
	s.strs = codec.Strings{}
	s.batch, s.batchTmp = nil, nil
	for i := range s.all {
		if s.dead[i] > 0 {
			s.compact(i)
		}
	}
}

// Snapshot encodes every entry into the section of its key group, at once
// and in full: the whole state as it is now, each entry the key and then
// the value (what enc writes).
func (s *Memory[K, V]) Snapshot(sec *Sections, keyGroup func(K) int, enc func(w *codec.Writer, k K, v *V)) error {
	for e := range s.idx.all {
		k := e.key
		kg := keyGroup(k)
		i := kg - sec.Start
		if i < 0 || i >= len(sec.W) {
			return fmt.Errorf("key %v is in key group %d, outside this subtask's range [%d, %d)", k, kg, sec.Start, sec.Start+len(sec.W))
		}
		w := &sec.W[i]
		mark := w.Begin()
		enc(w, k, e.val)
		w.End(mark)
	}
	return nil
}

// Restore adds the entries of one full section that Snapshot wrote.
func (s *Memory[K, V]) Restore(section []byte, dec func(r *codec.Reader) (K, *V)) error {
	r := codec.NewReader(section)
	for r.More() {
		k, v := dec(r.Nested())
		if r.Err() != nil {
			break
		}
		s.Put(k, v)
	}
	return r.Err()
}

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
	return NewSectionsIn(start, end, hint, nil)
}

// NewSectionsIn is NewSectionsSized that writes section i into spare[i]
// (emptied), the buffer of an earlier snapshot's section, when it has
// that room and at most twice it: a state that snapshots often then
// writes into memory it has used before, not fresh pages, and a state
// that shrank does not keep the buffers of its largest snapshot. A
// section without a hint gets no buffer.
func NewSectionsIn(start, end int, hint []int, spare [][]byte) *Sections {
	s := NewSections(start, end)
	for i := range s.W {
		if i >= len(hint) || hint[i] <= 0 {
			continue
		}
		room := hint[i] + hint[i]/16 + 64
		if i < len(spare) && cap(spare[i]) >= room && cap(spare[i]) <= 2*room {
			s.W[i] = *codec.NewWriter(spare[i][:0])
		} else {
			s.W[i] = *codec.NewWriter(make([]byte, 0, room))
		}
	}
	return s
}
