// Package kafka is the facade of the Kafka connector for generated code:
// what a pipeline with a Kafka source or sink uses, beside package
// runtime. It is a package of its own so that only the programs of such
// pipelines link a Kafka client.
package kafka

import (
	"strconv"

	"github.com/pipegen/pipegen/runtime"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/connector/kafka"
)

type (
	// Source is one subtask of a Kafka source.
	Source[T any] = kafka.Source[T]
	// Sink is one subtask of a Kafka sink.
	Sink[T any] = kafka.Sink[T]
	// Watermarks are a Kafka source subtask's watermarks, per partition.
	Watermarks = kafka.Watermarks
)

// NewSource prepares subtask sub of the Kafka source node.
func NewSource[T any](j *runtime.Job, node, sub int, f runtime.Format[T]) *Source[T] {
	return kafka.NewSource(j, node, sub, f)
}

// NewSink prepares subtask sub of the Kafka sink node; key makes a
// message's key (nil: none).
func NewSink[T any](j *runtime.Job, node, sub int, enc runtime.Encoder[T], key func(T) []byte) *Sink[T] {
	return kafka.NewSink(j, node, sub, enc, key)
}

// CSVFormat reads a message's value as one CSV line into T, the columns
// in the order of T's fields, with the delimiter option of source node.
func CSVFormat[T any](j *runtime.Job, node int) runtime.Format[T] {
	return CSVFormatFast[T](j, node, nil)
}

// CSVFormatFast is CSVFormat with a generated decoder of the cells of a
// value (see runtime.CSVFormatFast); nil is none.
func CSVFormatFast[T any](j *runtime.Job, node int, decode func(cells [][]byte, cols []int, v *T) bool) runtime.Format[T] {
	n := j.Node(node)
	d := []rune(n.Option("delimiter"))
	if len(d) != 1 {
		d = []rune{','}
	}
	f, err := format.CSVFormatFast(d[0], false, decode)
	if err != nil {
		runtime.Abortf("sources.%s: %w", n.Name, err)
	}
	return f
}

// RawFormat gives a message's value as a []byte record.
func RawFormat() runtime.Format[[]byte] { return kafka.RawFormat() }

// EncodeRaw writes a []byte record as the message's value.
func EncodeRaw(dst, v []byte) ([]byte, error) { return kafka.EncodeRaw(dst, v) }

// KeyBytes makes a message's key from a string or []byte key function.
func KeyBytes[T any, K ~string | ~[]byte](f func(T) K) func(T) []byte {
	return func(v T) []byte { return []byte(f(v)) }
}

// KeyInt makes a message's key from an integer key function: the number
// in decimal.
func KeyInt[T any, K ~int | ~int8 | ~int16 | ~int32 | ~int64](f func(T) K) func(T) []byte {
	return func(v T) []byte { return strconv.AppendInt(nil, int64(f(v)), 10) }
}

// ByRef makes a key function that takes its record by pointer take it by
// value, as the key helpers above do: the key of the keyed node a sink
// reads, when that node's key function takes its records by pointer.
func ByRef[T, K any](f func(*T) K) func(T) K {
	return func(v T) K { return f(&v) }
}

// KeyUint is KeyInt for unsigned integers.
func KeyUint[T any, K ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64](f func(T) K) func(T) []byte {
	return func(v T) []byte { return strconv.AppendUint(nil, uint64(f(v)), 10) }
}
