package pebblestate

import (
	"encoding/binary"
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/pebblestate/internal/kv"
)

// writeCanonical writes the store's checkpoint in folder local as the
// memory backend's full state file (the canonical form of a savepoint):
// one section per key group of the subtask's range, each entry the
// key's and the value's bytes as the generated serializers wrote them,
// length-prefixed. The store's keys are the key group (2 bytes, big
// endian) and then the key's bytes, so nothing is decoded: the bytes are
// moved, in the store's order.
func (st *untyped) writeCanonical(id int64, local string, stor *storage.Storage) (storage.StateFile, error) {
	db, err := st.files.open(local, true)
	if err != nil {
		return storage.StateFile{}, st.errorf("open the checkpoint", err)
	}
	defer db.Close()
	return st.writeSections(db, id, stor, nil, func(sec *codec.Writer, key, value []byte) error {
		mark := sec.Begin()
		sec.Raw(key)
		sec.Raw(value)
		sec.End(mark)
		return nil
	})
}

// writeSections writes the subtask's key groups of db, a checkpoint of
// the store, as a state file of the memory backend's form for
// savepoint id: one section per key group, each begun by header (nil:
// none), then what entry writes of each of the group's keys (its bytes
// after the key-group prefix) and values, in the store's order. An error
// of entry is returned as it is.
func (st *untyped) writeSections(db kv.Store, id int64, stor *storage.Storage, header func(*codec.Writer), entry func(sec *codec.Writer, key, value []byte) error) (storage.StateFile, error) {
	sub := st.t.Subtask()
	name := fmt.Sprintf("%s-%d-savepoint.state", st.uid, sub)
	w, err := stor.CreateState(id, name, st.start, st.end-st.start)
	if err != nil {
		return storage.StateFile{}, err
	}
	it, err := db.NewIter(&kv.IterOptions{LowerBound: groupPrefix(st.start), UpperBound: groupPrefix(st.end)})
	if err != nil {
		w.Abort()
		return storage.StateFile{}, st.errorf("iterate", err)
	}
	sec := codec.NewWriter(nil)
	begin := func() {
		if header != nil {
			header(sec)
		}
	}
	begin()
	kg := st.start
	flushTo := func(upto int) {
		for ; kg < upto; kg++ {
			w.Section(sec.Bytes())
			sec.Reset()
			begin()
		}
	}
	for ok := it.First(); ok; ok = it.Next() {
		key := it.Key()
		if len(key) < 2 {
			continue
		}
		flushTo(int(binary.BigEndian.Uint16(key)))
		v, err := it.ValueAndErr()
		if err == nil {
			err = entry(sec, key[2:], v)
		} else {
			err = st.errorf("iterate", err)
		}
		if err != nil {
			it.Close()
			w.Abort()
			return storage.StateFile{}, err
		}
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
