package pebblestate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
	"github.com/pipegen/pipegen/runtime/state"
)

// IntervalJoin is the state of one subtask of an interval join on the
// pebble backend, with the semantics of eventtime.IntervalJoin (which the
// memory backend uses): the buffered records of both sides in a store of
// their own, so that a checkpoint writes the records buffered or dropped
// since the last one (in the store's new sstables) and a restore links
// them back.
//
// Each buffered record is two keys. One by key group, key, side, time and
// arrival number (prefixJoin) holds the record: a key's records of one
// side are a range of the store in the order the memory backend keeps
// them, which a record of the other side scans for its matches. The other
// is the same key behind the time at which the record can no longer match
// (prefixJoinDrop): Advance reads those up to the watermark and deletes
// both. The changes since the last barrier are in an indexed batch, which
// reads through to the store; at the barrier it is written to the store,
// with the watermark and the next arrival number.
type IntervalJoin[K comparable, L, R any] struct {
	lower, upper int64
	codec        *state.Codec[K, L]
	encR         func(*codec.Writer, *R)
	decR         func(*codec.Reader) *R
	// store is the store: its checkpoints, restores and files. It holds
	// no per-key values of its own: the records are the join's part.
	store *Keyed[K, L]

	// b holds the changes not written to the store yet (nil before the
	// first use).
	b   kv.Batch
	wm  int64
	seq uint64
	// loaded is set once the meta values are read from the store;
	// restored once a restore set the watermark (later ones can only
	// lower it); written is what the store holds of them.
	loaded, restored bool
	written          joinMeta
	// low is a time at or before the earliest drop time of a buffered
	// record, exactly it when known: Advance reads nothing before it, not
	// even the deletions of records it dropped, which stay in the store
	// until it is compacted.
	low      int64
	lowKnown bool
	// spillAt is timerSpill (tests make it small).
	spillAt int
	// it reads the batch (and the store behind it) for the records a new
	// one meets, from one record to the next: moving it (SetOptions)
	// costs less than making one. Its bounds alternate between two
	// buffers, as it may compare the new ones with the old.
	it     kv.Iterator
	bounds [2][2][]byte
	flip   int

	kb, key, drop, bound, val codec.Writer
}

// joinMeta is what the store holds beside the records: the watermark, the
// next arrival number, and the bounds the drop times were computed with.
type joinMeta struct {
	wm           int64
	seq          uint64
	lower, upper int64
	ok           bool
}

// The keys of a join's store, besides the meta key.
const (
	// prefixJoin: a buffered record: 0x83, key group (2 bytes), key,
	// side (0 left, 1 right), time (8 bytes, ordered), arrival number (8
	// bytes) -> the record as the generated serializer writes it.
	prefixJoin = 0x83
	// prefixJoinDrop: the same record by the time it is dropped: 0x84,
	// drop time (8 bytes, ordered), then the record's key without its
	// first byte -> nothing. It is derived from the first: a restore at
	// another parallelism rebuilds it from the key-group ranges it copies.
	prefixJoinDrop = 0x84
	// joinSuffix is the length of a record's key after the operator's key.
	joinSuffix = 1 + 8 + 8
)

// joinComparer orders keys as Pebble's default comparer does (bytes), and
// splits a record's key (prefixJoin) before its time: the sstables' Bloom
// filters then hold a key's side, so that a record's seek for those it
// meets reads only the sstables that hold some. Separators and successors
// are the keys themselves (Pebble's trivial ones), so that every key
// Pebble splits is one of the store's or a bound, whose form says where
// its prefix ends.
var joinComparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = func(k []byte) int {
		if len(k) > joinSuffix && k[0] == prefixJoin {
			return len(k) - joinSuffix + 1
		}
		return len(k)
	}
	c.Separator = func(dst, a, _ []byte) []byte { return append(dst, a...) }
	c.Successor = func(dst, a []byte) []byte { return append(dst, a...) }
	c.Name = "pipegen.join.v1"
	return &c
}()

// metaJoin is the key of the join's meta values.
var metaJoin = []byte{prefixMeta, 'j'}

// OpenIntervalJoin opens the buffers of subtask t of the interval join
// node, empty or restored from the checkpoint the job resumes from (of
// either backend): right records with times in [left.TS+lower,
// left.TS+upper] join. c writes the node's keys and left records, encR
// and decR its right records. It panics when lower > upper: the compiler
// checks the bounds.
func OpenIntervalJoin[K comparable, L, R any](t *checkpoint.Task, node int, lower, upper int64, c *state.Codec[K, L], encR func(*codec.Writer, *R), decR func(*codec.Reader) *R) *IntervalJoin[K, L, R] {
	if lower > upper {
		panic(fmt.Sprintf("interval join bounds [%d, %d] are empty", lower, upper))
	}
	j := &IntervalJoin[K, L, R]{lower: lower, upper: upper, codec: c, encR: encR, decR: decR,
		wm: eventtime.MinTime, low: math.MinInt64, spillAt: timerSpill}
	j.store = openState(t, node, "", c, joinComparer)
	j.store.readMemory = func(fs []storage.StateFile, l *storage.Loaded) {
		for _, f := range fs { // join buffers are written whole: no deltas
			j.readMemory(f, l)
		}
	}
	j.store.noCanonical = true
	j.store.addPart(j)
	if files, _ := t.RestoredFiles(node, ""); len(files) > 0 {
		// After the store's restore: drop times computed with other
		// bounds are computed again before the first record.
		t.OnRestore(j.load)
	}
	return j
}

// SnapshotIntervalJoin adds the join j of node to the subtask's snapshot
// s: a checkpoint of its store (Snapshot).
func SnapshotIntervalJoin[K comparable, L, R any](s *checkpoint.Snapshot, node int, j *IntervalJoin[K, L, R]) {
	Snapshot(s, node, j.store)
}

func (j *IntervalJoin[K, L, R]) fail(what string, err error) { j.store.fail("join: "+what, err) }

// load reads the meta values on the first use, once the store is open.
func (j *IntervalJoin[K, L, R]) load() {
	if j.loaded {
		return
	}
	j.loaded = true
	m, err := readJoinMeta(j.store.db)
	if err != nil {
		j.fail("read", err)
	}
	if m.ok {
		j.wm, j.seq = m.wm, m.seq
		if m.lower != j.lower || m.upper != j.upper {
			j.reindex()
		}
	}
	j.written = m
}

// readJoinMeta reads the meta values in db; ok is false when it has none.
func readJoinMeta(db kv.Reader) (m joinMeta, err error) {
	v, closer, err := db.Get(metaJoin)
	if errors.Is(err, kv.ErrNotFound) {
		return joinMeta{wm: eventtime.MinTime}, nil
	}
	if err != nil {
		return m, err
	}
	defer closer.Close()
	r := codec.NewReader(v)
	m = joinMeta{wm: r.Varint(), seq: r.Uvarint(), lower: r.Varint(), upper: r.Varint(), ok: true}
	return m, r.Err()
}

func (j *IntervalJoin[K, L, R]) meta() joinMeta {
	return joinMeta{wm: j.wm, seq: j.seq, lower: j.lower, upper: j.upper, ok: true}
}

// writeMeta adds the meta values to w (the batch, or the store).
func (j *IntervalJoin[K, L, R]) writeMeta(w kv.Writer) {
	var v codec.Writer
	v.Varint(j.wm)
	v.Uvarint(j.seq)
	v.Varint(j.lower)
	v.Varint(j.upper)
	if err := w.Set(metaJoin, v.Bytes()); err != nil {
		j.fail("write", err)
	}
	j.written = j.meta()
}

// batch returns the batch of changes, made at the first use.
func (j *IntervalJoin[K, L, R]) batch() kv.Batch {
	if j.b == nil {
		j.load()
		j.b = j.store.db.NewIndexedBatch()
	}
	return j.b
}

// Len is the number of buffered records. It reads them all.
func (j *IntervalJoin[K, L, R]) Len() int {
	it, err := j.batch().NewIter(&kv.IterOptions{LowerBound: []byte{prefixJoin}, UpperBound: []byte{prefixJoin + 1}})
	if err != nil {
		j.fail("read", err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n
}

// Watermark is the largest watermark Advance has seen (after a restore,
// the checkpoint's), MinTime at first.
func (j *IntervalJoin[K, L, R]) Watermark() int64 {
	j.load()
	return j.wm
}

// leftDrop is when a left record at ts can no longer match: right records
// to come are later than the watermark.
func (j *IntervalJoin[K, L, R]) leftDrop(ts int64) int64 { return eventtime.AddSat(ts, j.upper) }

// rightDrop is when a right record at ts can no longer match.
func (j *IntervalJoin[K, L, R]) rightDrop(ts int64) int64 { return eventtime.SubSat(ts, j.lower) }

// dropAt is when the record whose store key is rec can no longer match.
func (j *IntervalJoin[K, L, R]) dropAt(rec []byte) int64 {
	n := len(rec)
	ts := unordered(rec[n-16 : n-8])
	if rec[n-17] == 0 {
		return j.leftDrop(ts)
	}
	return j.rightDrop(ts)
}

func unordered(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ 1<<63) }

// keyBytes encodes k after its key group into j.kb: the prefix of its
// records' keys after prefixJoin.
func (j *IntervalJoin[K, L, R]) keyBytes(k K) []byte {
	st := j.store
	kg := st.keyGroup(k)
	if kg < st.start || kg >= st.end {
		fault.Abortf("operators.%s[%d]: key %v is in key group %d, outside this subtask's range [%d, %d)", st.name, st.t.Subtask(), k, kg, st.start, st.end)
	}
	w := &j.kb
	w.Reset()
	w.Raw([]byte{prefixJoin, byte(kg >> 8), byte(kg)})
	j.codec.EncodeKey(w, k)
	return w.Bytes()
}

// recordKey is the store key of a record of key kb (keyBytes) into w.
func recordKey(w *codec.Writer, kb []byte, side byte, ts int64, seq uint64) []byte {
	w.Reset()
	w.Raw(kb)
	var b [joinSuffix]byte
	b[0] = side
	binary.BigEndian.PutUint64(b[1:], ordered(ts))
	binary.BigEndian.PutUint64(b[9:], seq)
	w.Raw(b[:])
	return w.Bytes()
}

// dropKey is the drop key of the record whose key is rec, into w.
func dropKey(w *codec.Writer, rec []byte, at int64) []byte {
	w.Reset()
	var b [9]byte
	b[0] = prefixJoinDrop
	binary.BigEndian.PutUint64(b[1:], ordered(at))
	w.Raw(b[:])
	w.Raw(rec[1:])
	return w.Bytes()
}

// AddLeft joins a left record of key k at time ts with the buffered right
// records, calling emit for each pair, and buffers it. It returns false,
// and changes nothing, when the record is late: ts <= inputWatermark.
func (j *IntervalJoin[K, L, R]) AddLeft(k K, l L, ts, inputWatermark int64, emit func(l L, r R, ts int64)) bool {
	b := j.batch()
	if ts <= max(inputWatermark, j.wm) {
		return false
	}
	kb := j.keyBytes(k)
	j.scan(b, kb, 1, eventtime.AddSat(ts, j.lower), eventtime.AddSat(ts, j.upper), func(rts int64, v []byte) {
		rr := codec.NewReader(v)
		r := j.decR(rr)
		if err := rr.Err(); err != nil {
			j.fail(fmt.Sprintf("decode a right record of key %v", k), err)
		}
		var rv R
		if r != nil {
			rv = *r
		}
		emit(l, rv, max(ts, rts))
	})
	if drop := j.leftDrop(ts); drop > j.wm {
		j.val.Reset()
		j.codec.EncodeValue(&j.val, &l)
		j.buffer(b, kb, 0, ts, drop, &j.val, k)
	}
	return true
}

// AddRight joins a right record with the buffered left records, like
// AddLeft.
func (j *IntervalJoin[K, L, R]) AddRight(k K, r R, ts, inputWatermark int64, emit func(l L, r R, ts int64)) bool {
	b := j.batch()
	if ts <= max(inputWatermark, j.wm) {
		return false
	}
	kb := j.keyBytes(k)
	// l.TS in [ts-upper, ts-lower]
	j.scan(b, kb, 0, eventtime.SubSat(ts, j.upper), eventtime.SubSat(ts, j.lower), func(lts int64, v []byte) {
		lr := codec.NewReader(v)
		l := j.codec.DecodeValue(lr)
		if err := lr.Err(); err != nil {
			j.fail(fmt.Sprintf("decode a left record of key %v", k), err)
		}
		var lv L
		if l != nil {
			lv = *l
		}
		emit(lv, r, max(ts, lts))
	})
	if drop := j.rightDrop(ts); drop > j.wm {
		j.val.Reset()
		j.encR(&j.val, &r)
		j.buffer(b, kb, 1, ts, drop, &j.val, k)
	}
	return true
}

// scan calls match for each buffered record of key kb on side with a
// time in [lo, hi], in ascending time, equal times in arrival order.
func (j *IntervalJoin[K, L, R]) scan(b kv.Batch, kb []byte, side byte, lo, hi int64, match func(ts int64, v []byte)) {
	lower := recordKey(&j.key, kb, side, lo, 0)
	w := &j.bound
	w.Reset()
	w.Raw(kb)
	// A bound of the form of a record's key, whose prefix joinComparer
	// finds (ts MaxTime with the highest arrival number: never one).
	w.Raw([]byte{side})
	if hi == math.MaxInt64 {
		w.Raw(binary.BigEndian.AppendUint64(nil, math.MaxUint64))
		w.Raw(binary.BigEndian.AppendUint64(nil, math.MaxUint64))
	} else {
		w.Raw(binary.BigEndian.AppendUint64(nil, ordered(hi+1)))
		w.Raw(make([]byte, 8))
	}
	j.flip ^= 1
	bd := &j.bounds[j.flip]
	bd[0], bd[1] = append(bd[0][:0], lower...), append(bd[1][:0], w.Bytes()...)
	opts := &kv.IterOptions{LowerBound: bd[0], UpperBound: bd[1]}
	if j.it == nil {
		it, err := b.NewIter(opts)
		if err != nil {
			j.fail("read", err)
		}
		j.it = it
	} else {
		// It sees the batch as it is now.
		j.it.SetOptions(opts)
	}
	it := j.it
	// A seek within one prefix: the Bloom filters skip the sstables
	// without the key's side.
	for ok := it.SeekPrefixGE(bd[0]); ok; ok = it.Next() {
		key := it.Key()
		v, err := it.ValueAndErr()
		if err != nil {
			j.fail("read", err)
		}
		match(unordered(key[len(key)-16:len(key)-8]), v)
	}
	if err := it.Error(); err != nil {
		j.fail("read", err)
	}
}

// closeIter lets go of the iterator of the batch, which is committed.
func (j *IntervalJoin[K, L, R]) closeIter() {
	if j.it != nil {
		j.it.Close()
		j.it = nil
	}
}

// buffer adds a record of key kb with value v (the encoded record) to the
// batch, and its drop key.
func (j *IntervalJoin[K, L, R]) buffer(b kv.Batch, kb []byte, side byte, ts, drop int64, v *codec.Writer, k K) {
	if err := v.Err(); err != nil {
		j.fail(fmt.Sprintf("encode a record of key %v", k), err)
	}
	rec := recordKey(&j.key, kb, side, ts, j.seq)
	j.seq++
	if err := b.Set(rec, v.Bytes()); err != nil {
		j.fail("write", err)
	}
	if err := b.Set(dropKey(&j.drop, rec, drop), nil); err != nil {
		j.fail("write", err)
	}
	if drop < j.low {
		j.low = drop
	}
	j.maybeSpill()
}

// Advance moves the combined watermark to wm and drops the buffered
// records that no record to come can match. It reads nothing when none
// can be dropped.
func (j *IntervalJoin[K, L, R]) Advance(wm int64) {
	j.load()
	j.wm = max(j.wm, wm)
	wm = j.wm
	if j.lowKnown && j.low > wm {
		return
	}
	b := j.batch()
	it, err := b.NewIter(&kv.IterOptions{LowerBound: []byte{prefixJoinDrop}, UpperBound: []byte{prefixJoinDrop + 1}})
	if err != nil {
		j.fail("read", err)
	}
	next := int64(math.MaxInt64)
	var from [9]byte
	from[0] = prefixJoinDrop
	binary.BigEndian.PutUint64(from[1:], ordered(j.low))
	// The iterator's view is the batch's when it was made: deleting
	// what it has read changes nothing of it.
	for ok := it.SeekGE(from[:]); ok; ok = it.Next() {
		dk := it.Key()
		if at := unordered(dk[1:9]); at > wm {
			next = at
			break
		}
		if err := b.Delete(dk); err != nil {
			it.Close()
			j.fail("write", err)
		}
		w := &j.key
		w.Reset()
		w.Raw([]byte{prefixJoin})
		w.Raw(dk[9:])
		if err := b.Delete(w.Bytes()); err != nil {
			it.Close()
			j.fail("write", err)
		}
	}
	if err := it.Close(); err != nil {
		j.fail("read", err)
	}
	j.low, j.lowKnown = next, true
	j.maybeSpill()
}

// maybeSpill writes the changes to the store once they are many, unless
// the store is frozen (a checkpoint of it is being taken), unless they are
// very many.
func (j *IntervalJoin[K, L, R]) maybeSpill() {
	if j.b.Len() < j.spillAt {
		return
	}
	if j.store.frozen.Load() {
		if j.b.Len() < 4*j.spillAt {
			return
		}
		j.store.waitCapture()
	}
	j.commit()
}

// commit writes the changes and the meta values to the store.
func (j *IntervalJoin[K, L, R]) commit() {
	if j.written != j.meta() {
		j.writeMeta(j.b)
	}
	if j.b.Empty() {
		return
	}
	j.closeIter()
	if err := j.b.Commit(); err != nil {
		j.fail("write", err)
	}
	j.b.Close()
	j.b = j.store.db.NewIndexedBatch()
}

func (j *IntervalJoin[K, L, R]) barrier() {
	// The iterator holds on to the sstables it was made over, which
	// compactions replace: a new one per checkpoint lets them go.
	j.closeIter()
	if j.b != nil {
		j.commit()
	} else if j.loaded && j.written != j.meta() {
		j.writeMeta(j.store.db)
	}
}

func (j *IntervalJoin[K, L, R]) close() {
	j.closeIter()
	if j.b != nil {
		j.b.Close()
		j.b = nil
	}
}

// reindex computes the drop keys again with the join's bounds, which
// differ from those of the checkpoint the store was restored from (before
// any use).
func (j *IntervalJoin[K, L, R]) reindex() {
	db := j.store.db
	b := db.NewBatch()
	if err := b.DeleteRange([]byte{prefixJoinDrop}, []byte{prefixJoinDrop + 1}); err != nil {
		j.fail("restore", err)
	}
	j.commitRestore(b)
	j.index(db, db)
	j.writeMeta(db)
	if err := db.Flush(); err != nil {
		j.fail("restore", err)
	}
}

// index writes into db the drop key of every record of src.
func (j *IntervalJoin[K, L, R]) index(db kv.Store, src kv.Reader) {
	it, err := src.NewIter(&kv.IterOptions{LowerBound: []byte{prefixJoin}, UpperBound: []byte{prefixJoin + 1}})
	if err != nil {
		j.fail("restore", err)
	}
	defer it.Close()
	b := db.NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		if err := b.Set(dropKey(&j.drop, it.Key(), j.dropAt(it.Key())), nil); err != nil {
			j.fail("restore", err)
		}
		if b.Len() >= batchBytes {
			j.commitRestore(b)
			b = db.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		j.fail("restore", err)
	}
	j.commitRestore(b)
}

func (j *IntervalJoin[K, L, R]) commitRestore(b kv.Batch) {
	if err := b.Commit(); err != nil {
		j.fail("restore", err)
	}
	b.Close()
}

// restoredHeader merges the watermark and the next arrival number of a
// restored store or section: the first watermark, then the lowest (as
// the memory backend's restore does), and the highest number.
func (j *IntervalJoin[K, L, R]) restoredHeader(wm int64, seq uint64) {
	if !j.restored {
		j.wm = wm
	} else {
		j.wm = min(j.wm, wm)
	}
	j.restored = true
	j.seq = max(j.seq, seq)
}

// copyFrom copies the records of key groups [lo, hi) of an old store and
// makes their drop keys.
func (j *IntervalJoin[K, L, R]) copyFrom(old kv.Store, lo, hi int) {
	j.load()
	db := j.store.db
	m, err := readJoinMeta(old)
	if err != nil {
		j.fail("restore", err)
	}
	j.restoredHeader(m.wm, m.seq)
	it, err := old.NewIter(&kv.IterOptions{LowerBound: []byte{prefixJoin, byte(lo >> 8), byte(lo)}, UpperBound: []byte{prefixJoin, byte(hi >> 8), byte(hi)}})
	if err != nil {
		j.fail("restore", err)
	}
	defer it.Close()
	b := db.NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			j.fail("restore", err)
		}
		key := it.Key()
		j.seq = max(j.seq, binary.BigEndian.Uint64(key[len(key)-8:])+1)
		if err := b.Set(key, v); err != nil {
			j.fail("restore", err)
		}
		if err := b.Set(dropKey(&j.drop, key, j.dropAt(key)), nil); err != nil {
			j.fail("restore", err)
		}
		if b.Len() >= batchBytes {
			j.commitRestore(b)
			b = db.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		j.fail("restore", err)
	}
	j.writeMeta(b)
	j.commitRestore(b)
}

// readMemory reads the records of the subtask's key groups in a state
// file of the memory backend's form (a checkpoint of the memory backend,
// or a savepoint) into the store.
func (j *IntervalJoin[K, L, R]) readMemory(f storage.StateFile, l *storage.Loaded) {
	j.load()
	st := j.store
	db := st.db
	b := db.NewBatch()
	add := func(kb []byte, side byte, ts int64, drop int64) error {
		rec := recordKey(&j.key, kb, side, ts, j.seq)
		j.seq++
		if err := j.val.Err(); err != nil {
			return err
		}
		if err := b.Set(rec, j.val.Bytes()); err != nil {
			return err
		}
		return b.Set(dropKey(&j.drop, rec, drop), nil)
	}
	err := l.ReadSections(f, st.start, st.end, func(kg int, sec []byte) error {
		wm, ok, err := eventtime.ReadIntervalJoin(sec, j.codec.DecodeKey, j.codec.DecodeValue, j.decR, func(k K, left []eventtime.Timed[L], right []eventtime.Timed[R]) error {
			if g := st.keyGroup(k); g != kg {
				return fmt.Errorf("%w: key %v of key group %d is in the section of key group %d", codec.ErrCorrupt, k, g, kg)
			}
			kb := j.keyBytes(k)
			for i := range left {
				j.val.Reset()
				j.codec.EncodeValue(&j.val, &left[i].V)
				if err := add(kb, 0, left[i].TS, j.leftDrop(left[i].TS)); err != nil {
					return err
				}
			}
			for i := range right {
				j.val.Reset()
				j.encR(&j.val, &right[i].V)
				if err := add(kb, 1, right[i].TS, j.rightDrop(right[i].TS)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if ok {
			j.restoredHeader(wm, 0)
		}
		if b.Len() >= batchBytes {
			j.commitRestore(b)
			b = db.NewBatch()
		}
		return nil
	})
	if err != nil {
		j.fail("restore", err)
	}
	j.writeMeta(b)
	j.commitRestore(b)
}

// writeCanonical writes the records in db, a checkpoint of the store, as
// the memory backend's state file of the node (IntervalJoin.Snapshot's
// form): one section per key group, each with the watermark, then every
// key's records.
func (j *IntervalJoin[K, L, R]) writeCanonical(db kv.Store, id int64, stor *storage.Storage) ([]storage.StateFile, error) {
	st := j.store
	m, err := readJoinMeta(db)
	if err != nil {
		return nil, st.errorf("join: read", err)
	}
	sub := st.t.Subtask()
	name := fmt.Sprintf("%s-%d-savepoint.state", st.uid, sub)
	w, err := stor.CreateState(id, name, st.start, st.end-st.start)
	if err != nil {
		return nil, err
	}
	it, err := db.NewIter(&kv.IterOptions{LowerBound: []byte{prefixJoin, byte(st.start >> 8), byte(st.start)}, UpperBound: []byte{prefixJoin, byte(st.end >> 8), byte(st.end)}})
	if err != nil {
		w.Abort()
		return nil, st.errorf("join: iterate", err)
	}
	sec := codec.NewWriter(nil)
	kg := st.start
	eventtime.WriteIntervalJoinHeader(sec, m.wm)
	next := func(upto int) {
		for ; kg < upto; kg++ {
			w.Section(sec.Bytes())
			sec.Reset()
			eventtime.WriteIntervalJoinHeader(sec, m.wm)
		}
	}
	// cur is the key (after prefixJoin) whose records sides holds.
	var cur []byte
	var sides [2][]eventtime.TimedBytes
	flushKey := func() {
		if cur != nil {
			eventtime.WriteIntervalJoinKey(sec, cur[2:], sides[0], sides[1])
		}
		cur, sides[0], sides[1] = nil, sides[0][:0], sides[1][:0]
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		kp := k[1 : len(k)-joinSuffix]
		if !bytes.Equal(kp, cur) {
			flushKey()
			next(int(binary.BigEndian.Uint16(kp)))
			cur = append(cur, kp...)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			w.Abort()
			return nil, st.errorf("join: iterate", err)
		}
		side := k[len(k)-joinSuffix]
		sides[side&1] = append(sides[side&1], eventtime.TimedBytes{TS: unordered(k[len(k)-16 : len(k)-8]), V: bytes.Clone(v)})
	}
	flushKey()
	if err := it.Close(); err != nil {
		w.Abort()
		return nil, st.errorf("join: iterate", err)
	}
	next(st.end)
	size, crc, err := w.Close()
	if err != nil {
		return nil, err
	}
	return []storage.StateFile{{Subtask: sub, Name: name, KeyGroups: [2]int{st.start, st.end}, Size: size, CRC: crc}}, nil
}
