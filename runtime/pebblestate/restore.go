package pebblestate

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
)

// restore fills the store from the files of the checkpoint the job
// resumes from that hold key groups the subtask owns. When they are the
// store of one subtask with exactly this subtask's key groups, they are
// linked (or copied) in place and the store opened: nothing is decoded,
// and the next checkpoint refers to the same sstables. Otherwise the
// subtask opens a new store and copies into it the key-group ranges it
// owns from each old store (or from the memory backend's files).
func (st *Keyed[K, V]) restore(files []storage.StateFile, l *storage.Loaded) {
	st.restoreFiles(files, l, st.copyMemoryFile)
}

// restoreFiles is restore, with copyMemory the Keyed's copyMemoryFile:
// the only step that decodes keys and values.
func (st *untyped) restoreFiles(files []storage.StateFile, l *storage.Loaded, copyMemory func(storage.StateFile, *storage.Loaded)) {
	bySub := map[int][]storage.StateFile{}
	for _, f := range files {
		bySub[f.Subtask] = append(bySub[f.Subtask], f)
	}
	subs := slices.Sorted(func(yield func(int) bool) {
		for sub := range bySub {
			if !yield(sub) {
				return
			}
		}
	})
	if len(subs) == 1 {
		if fs := bySub[subs[0]]; fs[0].Kind == storage.KindPebble && fs[0].KeyGroups == [2]int{st.start, st.end} {
			uploaded := map[string]string{}
			for _, f := range fs {
				if err := st.files.get(l.Path(f), filepath.Join(st.files.dir, f.Store)); err != nil {
					st.fail("restore "+f.Name, err)
				}
				if f.Shared {
					st.names[f.Store] = f.Name
					uploaded[f.Store] = f.Name
				}
			}
			st.uploaded[l.Manifest.ID] = uploaded
			st.open()
			return
		}
	}
	st.open()
	for _, sub := range subs {
		fs := bySub[sub]
		if fs[0].Kind == storage.KindPebble {
			st.copyRanges(fs, l)
			continue
		}
		if st.readMemory != nil {
			st.readMemory(fs, l)
			continue
		}
		for _, f := range fs {
			copyMemory(f, l)
		}
	}
}

// batchBytes is how much a restore writes to the store in one batch.
const batchBytes = 4 << 20

// copyRanges copies the keys of the subtask's key groups from an old
// subtask's store, opened read-only from the checkpoint's files.
func (st *untyped) copyRanges(fs []storage.StateFile, l *storage.Loaded) {
	dir := st.files.dir + fmt.Sprintf(".restore-%d", fs[0].Subtask)
	st.files.fs.RemoveAll(dir)
	defer st.files.fs.RemoveAll(dir)
	if err := st.files.fs.MkdirAll(dir, 0o755); err != nil {
		st.fail("restore", err)
	}
	for _, f := range fs {
		if err := st.files.get(l.Path(f), filepath.Join(dir, f.Store)); err != nil {
			st.fail("restore "+f.Name, err)
		}
	}
	old, err := st.files.open(dir, true)
	if err != nil {
		st.fail("open the store of subtask "+fmt.Sprint(fs[0].Subtask), err)
	}
	defer old.Close()
	lo, hi := max(st.start, fs[0].KeyGroups[0]), min(st.end, fs[0].KeyGroups[1])
	it, err := old.NewIter(&kv.IterOptions{LowerBound: groupPrefix(lo), UpperBound: groupPrefix(hi)})
	if err != nil {
		st.fail("restore", err)
	}
	defer it.Close()
	b := st.db.NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			st.fail("restore", err)
		}
		if err := b.Set(it.Key(), v); err != nil {
			st.fail("restore", err)
		}
		if b.Len() >= batchBytes {
			st.commit(b)
			b = st.db.NewBatch()
		}
	}
	if err := it.Error(); err != nil {
		st.fail("restore", err)
	}
	st.commit(b)
	for _, p := range st.parts {
		p.copyFrom(old, lo, hi)
	}
}

func (st *untyped) commit(b kv.Batch) {
	if err := b.Commit(); err != nil {
		st.fail("restore", err)
	}
	b.Close()
	st.committed()
}

// copyMemoryFile writes into the store the entries of the subtask's key
// groups in a state file of the memory backend: a full one, or a delta
// (values and deletions) on top of the files before it.
func (st *Keyed[K, V]) copyMemoryFile(f storage.StateFile, l *storage.Loaded) {
	delta := f.Kind == storage.KindDelta
	b := st.db.NewBatch()
	err := l.ReadSections(f, st.start, st.end, func(_ int, sec []byte) error {
		sr := codec.NewReader(sec)
		for sr.More() {
			er := sr.Nested()
			op := uint64(0)
			if delta {
				op = er.Uvarint()
			}
			k := st.codec.DecodeKey(er)
			var v *V
			var ts int64
			if op == 0 && st.codec.TTL > 0 {
				ts = er.Varint()
			}
			if op == 0 {
				v = st.codec.DecodeValue(er)
			} else if op != 1 {
				er.Fail("unknown operation %d", op)
			}
			if err := sr.Err(); err != nil {
				return err
			}
			key := st.storeKey(k)
			var err error
			if v == nil {
				err = b.Delete(key)
			} else {
				st.val.Reset()
				if st.codec.TTL > 0 {
					st.val.Varint(ts)
				}
				st.codec.EncodeValue(&st.val, v)
				err = b.Set(key, st.val.Bytes())
			}
			if err != nil {
				return err
			}
		}
		if b.Len() >= batchBytes {
			st.commit(b)
			b = st.db.NewBatch()
		}
		return nil
	})
	if err != nil {
		st.fail("restore", err)
	}
	st.commit(b)
}
