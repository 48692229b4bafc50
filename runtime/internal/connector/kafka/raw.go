package kafka

import "github.com/pipegen/pipegen/runtime/internal/connector/format"

// RawFormat gives a message's value as it is, as a []byte record of its
// own.
func RawFormat() format.Format[[]byte] { return rawFormat{} }

type rawFormat struct{}

func (rawFormat) NewDecoder() format.Decoder[[]byte] { return rawFormat{} }
func (rawFormat) NeedsHeader() bool                  { return false }
func (rawFormat) Header([]byte) error                { return nil }
func (rawFormat) Decode(b []byte) ([]byte, bool, error) {
	return append([]byte(nil), b...), true, nil
}

// EncodeRaw writes a []byte record as the message's value.
func EncodeRaw(dst, v []byte) ([]byte, error) { return append(dst, v...), nil }
