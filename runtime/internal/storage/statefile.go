package storage

import (
	"bytes"
	"fmt"

	"github.com/pipegen/pipegen/runtime/codec"
)

// stateMagic starts every state file.
var stateMagic = []byte("PGS1")

// EncodeStateFile lays out the sections of key groups [start, end).
func EncodeStateFile(start int, sections [][]byte) []byte {
	w := codec.NewWriter(append([]byte(nil), stateMagic...))
	w.Uvarint(uint64(start))
	w.Uvarint(uint64(len(sections)))
	for _, sec := range sections {
		w.ByteSlice(sec)
	}
	return w.Bytes()
}

// DecodeStateFile returns the first key group and the sections of a state
// file's content (without its checksum).
func DecodeStateFile(data []byte) (start int, sections [][]byte, err error) {
	if !bytes.HasPrefix(data, stateMagic) {
		return 0, nil, fmt.Errorf("not a state file")
	}
	r := codec.NewReader(data[len(stateMagic):])
	start = int(r.Uvarint())
	n := r.Count()
	for range n {
		sections = append(sections, r.ByteSlice())
	}
	if err := r.Err(); err != nil {
		return 0, nil, err
	}
	if extra := r.Remaining(); extra > 0 {
		// The checksum matched, so this is not damage but a file of
		// another layout: refuse it rather than guess.
		return 0, nil, fmt.Errorf("%d bytes after the last of %d sections", extra, n)
	}
	return start, sections, nil
}
