package codec

import "encoding/binary"

// The ordered encodings write a value so that the byte order of two
// encodings is the order of the values, and so that an encoding is never
// the prefix of another one (it ends by itself, as every value of the
// codec does): they encode the keys of map state, whose entries a byte
// ordered store keeps, and iterates, in the order of their keys.

// OrderedString writes s with each 0x00 byte as 0x00 0xff, and then 0x00
// 0x01.
func (w *Writer) OrderedString(s string) {
	for i := 0; i < len(s); i++ {
		w.buf = append(w.buf, s[i])
		if s[i] == 0 {
			w.buf = append(w.buf, 0xff)
		}
	}
	w.buf = append(w.buf, 0, 1)
}

// OrderedInt writes x as 8 bytes, big endian, its sign bit flipped.
func (w *Writer) OrderedInt(x int64) { w.OrderedUint(uint64(x) ^ 1<<63) }

// OrderedUint writes x as 8 bytes, big endian.
func (w *Writer) OrderedUint(x uint64) { w.buf = binary.BigEndian.AppendUint64(w.buf, x) }

// OrderedString reads a string that Writer.OrderedString wrote.
func (r *Reader) OrderedString() string {
	if r.err != nil {
		return ""
	}
	var out []byte
	for i := r.off; i < len(r.buf); i++ {
		if r.buf[i] != 0 {
			continue
		}
		if i+1 >= len(r.buf) {
			break
		}
		switch r.buf[i+1] {
		case 1:
			if out == nil {
				s := string(r.buf[r.off:i])
				r.off = i + 2
				return s
			}
			out = append(out, r.buf[r.off:i]...)
			r.off = i + 2
			return string(out)
		case 0xff:
			out = append(out, r.buf[r.off:i+1]...)
			r.off = i + 2
			i++
		default:
			r.Fail("bad ordered string")
			return ""
		}
	}
	r.Fail("unterminated ordered string")
	return ""
}

// OrderedInt reads an int64 that Writer.OrderedInt wrote.
func (r *Reader) OrderedInt() int64 { return int64(r.OrderedUint() ^ 1<<63) }

// OrderedUint reads a uint64 that Writer.OrderedUint wrote.
func (r *Reader) OrderedUint() uint64 {
	b := r.fixed(8)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
