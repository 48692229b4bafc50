package pebblestate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
)

// Timers are the timers of one subtask of a process operator on the
// pebble backend, in the store of its keyed state (Keyed), so that a
// checkpoint writes the timers that changed since the last one (in the
// store's new sstables) and a restore links them back with the store.
//
// Each timer is two keys: one by key group, key, domain and time
// (prefixTimer), which says whether a timer exists and holds its
// registration number, and one by domain, time and registration number
// (prefixTimerTime), in the order timers run. The changes since the last
// barrier are in an indexed batch, which reads through to the store: at
// the barrier it is written to the store, as is the next registration
// number. Timers run as on the memory backend (eventtime.TimerService):
// in ascending time, equal times in the order they were registered.
//
// The time of the earliest timer of each domain is kept while it is
// known, so that a watermark or a tick before it reads nothing.
type Timers[K comparable] struct {
	timerStore
	keyGroup func(K) int
	encK     func(*codec.Writer, K)
	decK     func(*codec.Reader) K
}

// timerStore is the part of Timers that the key type does not touch: the
// store, its batch and barriers, the copy of a restore and the savepoint
// form. Its methods are compiled once, here, instead of once for every
// key type of every program (as untyped is Keyed's).
type timerStore struct {
	name       string // "operators.NAME[SUBTASK]", for errors
	uid        string
	sub        int
	db         func() kv.Store
	frozen     func() bool
	waitTaken  func()
	start, end int

	// b holds the changes not written to the store yet (nil before the
	// first use); seq is the next registration number, written the one
	// the store holds.
	b            kv.Batch
	seq, written uint64
	// low is, by domain, a time at or before the earliest timer's,
	// exactly its time when known (math.MaxInt64: none). Timers are looked
	// for from there: the deletions of the timers that ran before it,
	// which stay in the store until it is compacted, are not read again.
	low [2]struct {
		at    int64
		known bool
	}
	// spillAt is timerSpill (tests make it small).
	spillAt int
	// internal is set for the timers of another part (Windows), whose
	// savepoint form holds what they say.
	internal bool
	// While timers run (firing), cursor is the time key from which the
	// next one due is looked for; changes counts the timers registered
	// and deleted by the call that runs one.
	firing  bool
	domain  byte
	cursor  []byte
	changes int

	key, time codec.Writer
}

// The timer domains, as the keys write them.
const (
	eventDomain      = 0
	processingDomain = 1
)

// timerSpill is the size of the batch of changed timers above which it
// is written to the store between barriers.
const timerSpill = 8 << 20

// OpenTimers returns the timers of the process operator whose keyed state
// is st, in st's store, restored with it. Timers that a checkpoint of the
// memory backend holds (or a savepoint) are read into the store.
func OpenTimers[K comparable, V any](st *Keyed[K, V]) *Timers[K] {
	t := openTimersOf(st, st.keyGroup, st.codec.EncodeKey, st.codec.DecodeKey)
	if files, l := st.t.RestoredFiles(st.node, "timers"); len(files) > 0 {
		st.t.OnRestore(func() { t.restoreSections(files, l) })
	}
	return t
}

// openTimersOf returns timers in st's store whose keys are of another
// type than the store's (Sessions: a key and a session's start), placed in
// key groups by keyGroup and written by encK.
func openTimersOf[T, K comparable, V any](st *Keyed[K, V], keyGroup func(T) int, encK func(*codec.Writer, T), decK func(*codec.Reader) T) *Timers[T] {
	t := &Timers[T]{timerStore: timerStore{name: fmt.Sprintf("operators.%s[%d]", st.name, st.t.Subtask()), uid: st.uid, sub: st.t.Subtask(),
		db: func() kv.Store { return st.db }, frozen: st.frozen.Load, waitTaken: st.waitCapture,
		start: st.start, end: st.end, spillAt: timerSpill},
		keyGroup: keyGroup, encK: encK, decK: decK}
	t.low[0].at, t.low[1].at = math.MinInt64, math.MinInt64
	st.addPart(t)
	return t
}

var _ eventtime.Timers[string] = (*Timers[string])(nil)

func (t *timerStore) fail(what string, err error) {
	fault.Abortf("%s: pebble state: timers: %s: %w", t.name, what, err)
}

// batch returns the batch of changes, made at the first use: the store
// is open then, restored.
func (t *timerStore) batch() kv.Batch {
	if t.b == nil {
		db := t.db()
		t.seq = t.readSeq(db)
		t.written = t.seq
		t.b = db.NewIndexedBatch()
	}
	return t.b
}

// metaSeq is the key of the timers' next registration number.
var metaSeq = []byte{prefixMeta, 't'}

// readSeq reads the next registration number in the store db.
func readSeq(db kv.Reader) (uint64, error) {
	v, closer, err := db.Get(metaSeq)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	seq, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, fmt.Errorf("%w: next timer number %x", codec.ErrCorrupt, v)
	}
	return seq, nil
}

// readSeq is readSeq on the subtask's goroutine: an error fails it.
func (t *timerStore) readSeq(db kv.Reader) uint64 {
	seq, err := readSeq(db)
	if err != nil {
		t.fail("read", err)
	}
	return seq
}

// ordered maps a time to 8 bytes whose order is the times'.
func ordered(at int64) uint64 { return uint64(at) ^ 1<<63 }

func domainOf(processing bool) byte {
	if processing {
		return processingDomain
	}
	return eventDomain
}

// entryKey is the key of k's timer at time at of domain d, in t.key.
func (t *Timers[K]) entryKey(k K, d byte, at int64) []byte {
	kg := t.keyGroup(k)
	if kg < t.start || kg >= t.end {
		fault.Abortf("%s: key %v is in key group %d, outside this subtask's range [%d, %d)", t.name, k, kg, t.start, t.end)
	}
	w := &t.key
	w.Reset()
	w.Raw([]byte{prefixTimer, byte(kg >> 8), byte(kg)})
	t.encK(w, k)
	w.Raw([]byte{d})
	w.Raw(binary.BigEndian.AppendUint64(nil, ordered(at)))
	return w.Bytes()
}

// timeKey is the key of the timer by when it runs, into w; keyBytes are
// the key as encoded.
func timeKey(w *codec.Writer, d byte, at int64, seq uint64, kg int, keyBytes []byte) []byte {
	w.Reset()
	var b [20]byte
	b[0], b[1] = prefixTimerTime, d
	binary.BigEndian.PutUint64(b[2:], ordered(at))
	binary.BigEndian.PutUint64(b[10:], seq)
	binary.BigEndian.PutUint16(b[18:], uint16(kg))
	w.Raw(b[:])
	w.Raw(keyBytes)
	return w.Bytes()
}

// entryTimeKey is the time key of the timer whose entry is key (an entry
// key) with registration number seq.
func entryTimeKey(w *codec.Writer, key []byte, seq uint64) []byte {
	n := len(key)
	kg := int(binary.BigEndian.Uint16(key[1:3]))
	at := int64(binary.BigEndian.Uint64(key[n-8:]) ^ 1<<63)
	return timeKey(w, key[n-9], at, seq, kg, key[3:n-9])
}

// Register sets a timer of k at time at, in processing time or in event
// time. It may be called from a timer's fire.
func (t *Timers[K]) Register(k K, at int64, processing bool) {
	t.register(k, at, processing, false, 0)
}

// registerSeq is Register with seq as the registration number, which
// orders timers of equal time (Windows: the window's creation number).
func (t *Timers[K]) registerSeq(k K, at int64, processing bool, seq uint64) {
	t.register(k, at, processing, true, seq)
}

func (t *Timers[K]) register(k K, at int64, processing, numbered bool, seq uint64) {
	b := t.batch()
	d := domainOf(processing)
	key := t.entryKey(k, d, at)
	_, closer, err := b.Get(key)
	if err == nil {
		closer.Close()
		return // it exists
	}
	if !errors.Is(err, kv.ErrNotFound) {
		t.fail("read", err)
	}
	if !numbered {
		seq = t.seq
		t.seq++
	}
	if err := b.Set(key, binary.AppendUvarint(nil, seq)); err != nil {
		t.fail("write", err)
	}
	tk := entryTimeKey(&t.time, key, seq)
	if err := b.Set(tk, nil); err != nil {
		t.fail("write", err)
	}
	if l := &t.low[d]; at < l.at {
		l.at = at
	}
	t.changes++
	if t.firing && d == t.domain && bytes.Compare(tk, t.cursor) < 0 {
		t.cursor = append(t.cursor[:0], tk...)
	}
	t.maybeSpill()
}

// Delete removes the timer of k at time at, if there is one. It may be
// called from a timer's fire.
func (t *Timers[K]) Delete(k K, at int64, processing bool) {
	b := t.batch()
	d := domainOf(processing)
	key := t.entryKey(k, d, at)
	v, closer, err := b.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return
	}
	if err != nil {
		t.fail("read", err)
	}
	seq, n := binary.Uvarint(v)
	closer.Close()
	if n <= 0 {
		t.fail("read", fmt.Errorf("%w: timer number %x", codec.ErrCorrupt, v))
	}
	if err := b.Delete(key); err != nil {
		t.fail("write", err)
	}
	if err := b.Delete(entryTimeKey(&t.time, key, seq)); err != nil {
		t.fail("write", err)
	}
	if l := &t.low[d]; l.at == at {
		l.known = false // it stays a lower bound
	}
	t.changes++
	t.maybeSpill()
}

// setKnown sets the event-time timer of k at time at with number seq,
// which the caller knows does not exist (a window's: Windows and Sessions
// keep one per window), without reading the store to find out.
func (t *Timers[K]) setKnown(k K, at int64, seq uint64) {
	b := t.batch()
	key := t.entryKey(k, eventDomain, at)
	if err := b.Set(key, binary.AppendUvarint(nil, seq)); err != nil {
		t.fail("write", err)
	}
	tk := entryTimeKey(&t.time, key, seq)
	if err := b.Set(tk, nil); err != nil {
		t.fail("write", err)
	}
	if l := &t.low[eventDomain]; at < l.at {
		l.at = at
	}
	t.changes++
	if t.firing && t.domain == eventDomain && bytes.Compare(tk, t.cursor) < 0 {
		t.cursor = append(t.cursor[:0], tk...)
	}
	t.maybeSpill()
}

// deleteKnown removes the event-time timer of k at time at, which the
// caller knows exists with number seq, without reading the store.
func (t *Timers[K]) deleteKnown(k K, at int64, seq uint64) {
	b := t.batch()
	key := t.entryKey(k, eventDomain, at)
	if err := b.Delete(key); err != nil {
		t.fail("write", err)
	}
	if err := b.Delete(entryTimeKey(&t.time, key, seq)); err != nil {
		t.fail("write", err)
	}
	if l := &t.low[eventDomain]; l.at == at {
		l.known = false // it stays a lower bound
	}
	t.changes++
	t.maybeSpill()
}

// AdvanceEvent runs every event-time timer at or before wm, in time order,
// as TimerService.AdvanceEvent does.
func (t *Timers[K]) AdvanceEvent(wm int64, fire func(k K, at int64)) {
	t.advance(eventDomain, wm, fire)
}

// AdvanceProcessing runs every processing-time timer at or before now,
// like AdvanceEvent.
func (t *Timers[K]) AdvanceProcessing(now int64, fire func(k K, at int64)) {
	t.advance(processingDomain, now, fire)
}

func (t *Timers[K]) advance(d byte, now int64, fire func(k K, at int64)) {
	if l := t.low[d]; l.known && l.at > now {
		return
	}
	b := t.batch()
	opts := &kv.IterOptions{LowerBound: []byte{prefixTimerTime, d}, UpperBound: []byte{prefixTimerTime, d + 1}}
	it, err := b.NewIter(opts)
	if err != nil {
		t.fail("read", err)
	}
	t.firing, t.domain = true, d
	defer func() {
		t.firing = false
		it.Close()
	}()
	next := int64(math.MaxInt64)
	var from [10]byte
	from[0], from[1] = prefixTimerTime, d
	binary.BigEndian.PutUint64(from[2:], ordered(t.low[d].at))
	for ok := it.SeekGE(from[:]); ok; {
		tk := it.Key()
		at := int64(binary.BigEndian.Uint64(tk[2:10]) ^ 1<<63)
		if at > now {
			next = at
			break
		}
		t.cursor = append(t.cursor[:0], tk...)
		kg := int(binary.BigEndian.Uint16(tk[18:20]))
		kb := t.cursor[20:]
		r := codec.NewReader(kb)
		k := t.decK(r)
		if err := r.Err(); err != nil {
			t.fail("decode a timer's key", err)
		}
		// The timer is gone before it runs, as on the memory backend: its
		// fire may register it again.
		w := &t.key
		w.Reset()
		w.Raw([]byte{prefixTimer, byte(kg >> 8), byte(kg)})
		w.Raw(kb)
		w.Raw([]byte{d})
		w.Raw(tk[2:10])
		if err := b.Delete(w.Bytes()); err != nil {
			t.fail("write", err)
		}
		if err := b.Delete(t.cursor); err != nil {
			t.fail("write", err)
		}
		t.changes = 0
		fire(k, at)
		if t.changes == 0 {
			// The iterator's view lacks only the deletions of timers it
			// has passed.
			ok = it.Next()
			continue
		}
		// The call registered or deleted timers: look again from the
		// timer it ran, or from an earlier one it registered.
		it.SetOptions(opts)
		ok = it.SeekGE(t.cursor)
	}
	if err := it.Error(); err != nil {
		t.fail("read", err)
	}
	t.low[d].at, t.low[d].known = next, true
}

// scan calls fire for every timer of domain d after time after, in the
// order they would run, without running them: fire must not register or
// delete timers.
func (t *Timers[K]) scan(d byte, after int64, fire func(k K, at int64)) {
	if after == math.MaxInt64 {
		return
	}
	it, err := t.batch().NewIter(&kv.IterOptions{LowerBound: []byte{prefixTimerTime, d}, UpperBound: []byte{prefixTimerTime, d + 1}})
	if err != nil {
		t.fail("read", err)
	}
	defer it.Close()
	var from [10]byte
	from[0], from[1] = prefixTimerTime, d
	binary.BigEndian.PutUint64(from[2:], ordered(after+1))
	for ok := it.SeekGE(from[:]); ok; ok = it.Next() {
		tk := it.Key()
		r := codec.NewReader(tk[20:])
		k := t.decK(r)
		if err := r.Err(); err != nil {
			t.fail("decode a timer's key", err)
		}
		fire(k, int64(binary.BigEndian.Uint64(tk[2:10])^1<<63))
	}
	if err := it.Error(); err != nil {
		t.fail("read", err)
	}
}

// Len is the number of timers. It reads them all.
func (t *timerStore) Len() int {
	it, err := t.batch().NewIter(&kv.IterOptions{LowerBound: []byte{prefixTimerTime}, UpperBound: []byte{prefixTimerTime + 1}})
	if err != nil {
		t.fail("read", err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n
}

// maybeSpill writes the changes to the store once they are many, unless
// timers are running (their iterator reads the batch), or while the store
// is frozen, unless they are very many.
func (t *timerStore) maybeSpill() {
	if t.firing || t.b.Len() < t.spillAt {
		return
	}
	if t.frozen() {
		if t.b.Len() < 4*t.spillAt {
			return
		}
		t.waitTaken()
	}
	t.commit()
}

// commit writes the changes and the next registration number to the
// store.
func (t *timerStore) commit() {
	if t.seq != t.written {
		if err := t.b.Set(metaSeq, binary.AppendUvarint(nil, t.seq)); err != nil {
			t.fail("write", err)
		}
		t.written = t.seq
	}
	if t.b.Empty() {
		return
	}
	if err := t.b.Commit(); err != nil {
		t.fail("write", err)
	}
	t.b.Close()
	t.b = t.db().NewIndexedBatch()
}

func (t *timerStore) barrier() {
	if t.b != nil {
		t.commit()
	}
}

func (t *timerStore) close() {
	if t.b != nil {
		t.b.Close()
		t.b = nil
	}
}

// copyFrom copies the timers of key groups [lo, hi) of the old store, and
// builds their time keys.
func (t *timerStore) copyFrom(old kv.Store, lo, hi int) {
	db := t.db()
	seq := max(t.readSeq(db), t.readSeq(old))
	it, err := old.NewIter(&kv.IterOptions{LowerBound: []byte{prefixTimer, byte(lo >> 8), byte(lo)}, UpperBound: []byte{prefixTimer, byte(hi >> 8), byte(hi)}})
	if err != nil {
		t.fail("restore", err)
	}
	defer it.Close()
	b := db.NewBatch()
	var w codec.Writer
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			t.fail("restore", err)
		}
		s, n := binary.Uvarint(v)
		if n <= 0 {
			t.fail("restore", fmt.Errorf("%w: timer number %x", codec.ErrCorrupt, v))
		}
		seq = max(seq, s+1)
		if err := b.Set(it.Key(), v); err != nil {
			t.fail("restore", err)
		}
		if err := b.Set(entryTimeKey(&w, it.Key(), s), nil); err != nil {
			t.fail("restore", err)
		}
		if b.Len() >= batchBytes {
			t.commitRestore(b)
			b = db.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		t.fail("restore", err)
	}
	if err := b.Set(metaSeq, binary.AppendUvarint(nil, seq)); err != nil {
		t.fail("restore", err)
	}
	t.commitRestore(b)
}

func (t *timerStore) commitRestore(b kv.Batch) {
	if err := b.Commit(); err != nil {
		t.fail("restore", err)
	}
	b.Close()
}

// restoreSections reads into the store the timers of the subtask's key
// groups in state files of the memory backend's form (a checkpoint of
// the memory backend, or a savepoint).
func (t *Timers[K]) restoreSections(files []storage.StateFile, l *storage.Loaded) {
	db := t.db()
	seq := t.readSeq(db)
	b := db.NewBatch()
	for _, f := range files {
		err := l.ReadSections(f, t.start, t.end, func(_ int, sec []byte) error {
			// A delta's timers gone since the file before are deleted
			// with both their keys: a deletion carries the timer's
			// registration number.
			next, err := eventtime.ReadTimerChanges(sec, f.Kind == storage.KindDelta, t.decK, func(del bool, k K, at int64, processing bool, s uint64) error {
				key := t.entryKey(k, domainOf(processing), at)
				seq = max(seq, s+1)
				if del {
					if err := b.Delete(key); err != nil {
						return err
					}
					return b.Delete(entryTimeKey(&t.time, key, s))
				}
				if err := b.Set(key, binary.AppendUvarint(nil, s)); err != nil {
					return err
				}
				return b.Set(entryTimeKey(&t.time, key, s), nil)
			})
			if err != nil {
				return err
			}
			seq = max(seq, next)
			if b.Len() >= batchBytes {
				t.commitRestore(b)
				b = db.NewBatch()
			}
			return nil
		})
		if err != nil {
			t.fail("restore", err)
		}
	}
	if err := b.Set(metaSeq, binary.AppendUvarint(nil, seq)); err != nil {
		t.fail("restore", err)
	}
	t.commitRestore(b)
}

// writeCanonical writes the timers in db, a checkpoint of the store, as
// the memory backend's state file of timers: one section per key group,
// each with a header and the timers (eventtime.ReadTimers reads it).
func (t *timerStore) writeCanonical(db kv.Store, id int64, stor *storage.Storage) ([]storage.StateFile, error) {
	if t.internal {
		return nil, nil
	}
	f, err := t.canonical(db, id, stor)
	if err != nil {
		return nil, err
	}
	return []storage.StateFile{f}, nil
}

func (t *timerStore) canonical(db kv.Store, id int64, stor *storage.Storage) (storage.StateFile, error) {
	seq, err := readSeq(db)
	if err != nil {
		return storage.StateFile{}, fmt.Errorf("%s: timers: %w", t.name, err)
	}
	name := fmt.Sprintf("%s-%d-savepoint.state", checkpoint.StateStem(t.uid, "timers"), t.sub)
	w, err := stor.CreateState(id, name, t.start, t.end-t.start)
	if err != nil {
		return storage.StateFile{}, err
	}
	it, err := db.NewIter(&kv.IterOptions{LowerBound: []byte{prefixTimer, byte(t.start >> 8), byte(t.start)}, UpperBound: []byte{prefixTimer, byte(t.end >> 8), byte(t.end)}})
	if err != nil {
		w.Abort()
		return storage.StateFile{}, fmt.Errorf("%s: timers: %w", t.name, err)
	}
	sec := codec.NewWriter(nil)
	kg := t.start
	eventtime.WriteTimerHeader(sec, seq)
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()
		n := len(key)
		for g := int(binary.BigEndian.Uint16(key[1:3])); kg < g; kg++ {
			w.Section(sec.Bytes())
			sec.Reset()
			eventtime.WriteTimerHeader(sec, seq)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			w.Abort()
			return storage.StateFile{}, fmt.Errorf("%s: timers: %w", t.name, err)
		}
		s, _ := binary.Uvarint(v)
		at := int64(binary.BigEndian.Uint64(key[n-8:]) ^ 1<<63)
		eventtime.WriteTimer(sec, key[3:n-9], at, key[n-9] == processingDomain, s)
	}
	if err := it.Close(); err != nil {
		w.Abort()
		return storage.StateFile{}, fmt.Errorf("%s: timers: %w", t.name, err)
	}
	for ; kg < t.end; kg++ {
		w.Section(sec.Bytes())
		sec.Reset()
		eventtime.WriteTimerHeader(sec, seq)
	}
	size, crc, err := w.Close()
	if err != nil {
		return storage.StateFile{}, err
	}
	return storage.StateFile{Subtask: t.sub, State: "timers", Name: name, KeyGroups: [2]int{t.start, t.end}, Size: size, CRC: crc}, nil
}
