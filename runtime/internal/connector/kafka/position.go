package kafka

import (
	"cmp"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/pipegen/pipegen/runtime/codec"
)

// positionFormat is the version of an encoded source position.
const positionFormat = 1

// tp names a partition of a topic.
type tp struct {
	topic     string
	partition int32
}

func (t tp) String() string { return fmt.Sprintf("%s/%d", t.topic, t.partition) }

func (t tp) less(u tp) bool {
	return t.topic < u.topic || t.topic == u.topic && t.partition < u.partition
}

// saved is one partition's part of a source subtask's position: the offset
// of the next record to read, the offset a bounded source stops at (-1:
// none), and the newest event time read from it (for its watermark).
type saved struct {
	tp
	next, stop int64
	maxTS      int64
}

// encodePosition writes the positions of a subtask's partitions, sorted.
func encodePosition(parts []saved) []byte {
	slices.SortFunc(parts, func(a, b saved) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	w := codec.NewWriter(nil)
	w.Uvarint(positionFormat)
	w.Uvarint(uint64(len(parts)))
	for _, p := range parts {
		w.String(p.topic)
		w.Varint(int64(p.partition))
		w.Varint(p.next)
		w.Varint(p.stop)
		w.Varint(p.maxTS)
	}
	return w.Bytes()
}

func decodePosition(b []byte) ([]saved, error) {
	r := codec.NewReader(b)
	if v := r.Uvarint(); r.Err() == nil && v != positionFormat {
		return nil, fmt.Errorf("position format %d, this program reads %d", v, positionFormat)
	}
	n := r.Count()
	var out []saved
	for range n {
		if r.Err() != nil {
			break
		}
		p := saved{tp: tp{topic: r.String(), partition: int32(r.Varint())}, next: r.Varint(), stop: r.Varint(), maxTS: r.Varint()}
		out = append(out, p)
	}
	return out, r.Err()
}

// castagnoli hashes topic names for assignment.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// owner is the subtask of p that reads partition partition of topic. The
// partitions of a topic go round-robin over the subtasks from a start that
// the topic's name decides, so that the first partitions of several topics
// do not all land on subtask 0, and a partition added to a topic does not
// move the others.
func owner(topic string, partition int32, p int) int {
	start := int(crc32.Checksum([]byte(topic), castagnoli) % uint32(p))
	return (start + int(partition)) % p
}
