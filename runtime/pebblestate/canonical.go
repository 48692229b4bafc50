package pebblestate

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// writeCanonical writes the store's checkpoint in folder local as the
// memory backend's full state file (the canonical form of a savepoint):
// one section per key group of the subtask's range, each entry the
// key's and the value's bytes as the generated serializers wrote them,
// length-prefixed. The store's keys are the key group (2 bytes, big
// endian) and then the key's bytes, so nothing is decoded: the bytes are
// moved, in the store's order.
func (st *Keyed[K, V]) writeCanonical(id int64, local string, stor *storage.Storage) (storage.StateFile, error) {
	db, err := st.files.open(local, true)
	if err != nil {
		return storage.StateFile{}, st.errorf("open the checkpoint", err)
	}
	defer db.Close()
	sub := st.t.Subtask()
	name := fmt.Sprintf("%s-%d-savepoint.state", st.uid, sub)
	w, err := stor.CreateState(id, name, st.start, st.end-st.start)
	if err != nil {
		return storage.StateFile{}, err
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: groupPrefix(st.start), UpperBound: groupPrefix(st.end)})
	if err != nil {
		w.Abort()
		return storage.StateFile{}, st.errorf("iterate", err)
	}
	sec := codec.NewWriter(nil)
	kg := st.start
	flushTo := func(upto int) {
		for ; kg < upto; kg++ {
			w.Section(sec.Bytes())
			sec.Reset()
		}
	}
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()
		if len(key) < 2 {
			continue
		}
		g := int(binary.BigEndian.Uint16(key))
		flushTo(g)
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			w.Abort()
			return storage.StateFile{}, st.errorf("iterate", err)
		}
		mark := sec.Begin()
		sec.Raw(key[2:])
		sec.Raw(v)
		sec.End(mark)
	}
	if err := it.Close(); err != nil {
		w.Abort()
		return storage.StateFile{}, st.errorf("iterate", err)
	}
	flushTo(st.end)
	size, crc, err := w.Close()
	if err != nil {
		return storage.StateFile{}, err
	}
	return storage.StateFile{Subtask: sub, State: st.state, Name: name, KeyGroups: [2]int{st.start, st.end}, Size: size, CRC: crc}, nil
}
