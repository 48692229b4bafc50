package textcodec

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Scanner reads one JSON value, strictly, for generated decoders. A call
// that meets what it does not expect (or does not handle) marks the
// scanner failed; after that every call does nothing and the loops of
// generated code end. The decoder then reports failure and its caller
// falls back to encoding/json.
type Scanner struct {
	data    []byte
	pos     int
	failed  bool
	scratch []byte
}

// maxDepth bounds the nesting Skip follows; deeper input is left to
// encoding/json.
const maxDepth = 1000

// Reset starts reading data.
func (s *Scanner) Reset(data []byte) {
	s.data, s.pos, s.failed = data, 0, false
}

// Fail marks the scanner failed.
func (s *Scanner) Fail() { s.failed = true }

// Failed reports whether the scanner failed.
func (s *Scanner) Failed() bool { return s.failed }

// End reports whether only white space is left, failing otherwise.
func (s *Scanner) End() bool {
	s.ws()
	if s.pos != len(s.data) {
		s.failed = true
	}
	return !s.failed
}

func (s *Scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (s *Scanner) peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// Null consumes a null and reports whether there was one.
func (s *Scanner) Null() bool {
	if s.failed || s.peek() != 'n' {
		return false
	}
	if len(s.data)-s.pos >= 4 && string(s.data[s.pos:s.pos+4]) == "null" {
		s.pos += 4
		return true
	}
	s.failed = true
	return false
}

// Open consumes the opening c ('{' or '[') of an object or array.
func (s *Scanner) Open(c byte) bool {
	if s.failed || s.peek() != c {
		s.failed = true
		return false
	}
	s.pos++
	return true
}

// First reports whether the object or array just opened has a first
// member, consuming its closing c when it has none.
func (s *Scanner) First(close byte) bool {
	if s.failed {
		return false
	}
	if s.peek() == close {
		s.pos++
		return false
	}
	return true
}

// Next reports whether another member follows the one just read,
// consuming the comma, or the closing c when none does.
func (s *Scanner) Next(close byte) bool {
	if s.failed {
		return false
	}
	switch s.peek() {
	case ',':
		s.pos++
		return true
	case close:
		s.pos++
		return false
	}
	s.failed = true
	return false
}

// Key reads an object's key and its colon. The key is valid until the
// next call.
func (s *Scanner) Key() []byte {
	k := s.str()
	if s.failed || s.peek() != ':' {
		s.failed = true
		return nil
	}
	s.pos++
	return k
}

// str reads a string and returns its contents, unescaped: a slice of the
// input when it has no escapes, else of the scratch buffer.
func (s *Scanner) str() []byte {
	if s.failed || s.peek() != '"' {
		s.failed = true
		return nil
	}
	s.pos++
	start := s.pos
	ascii := true
	d := s.data
	for i := start; i < len(d); i++ {
		// Most bytes of most strings need no look: skip them fast.
		i += plainPrefix(d[i:])
		if i == len(d) {
			break
		}
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			if !ascii && !utf8.Valid(d[start:i]) {
				s.failed = true // encoding/json would replace the bad bytes
				return nil
			}
			return d[start:i]
		case c == '\\':
			return s.unescape(start, i)
		case c < 0x20:
			s.failed = true
			return nil
		default:
			ascii = false
		}
	}
	s.failed = true
	return nil
}

// plain marks the bytes a string holds as they are: ASCII from 0x20 up
// but for the quote and the backslash.
var plain = func() (p [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\'
	}
	return p
}()

// unescape reads a string with escapes into scratch: it starts at start,
// and its first escape is at at.
func (s *Scanner) unescape(start, at int) []byte {
	b := append(s.scratch[:0], s.data[start:at]...)
	i := at
	for ; i < len(s.data); i++ {
		// The plain bytes between two escapes go over as one copy.
		if n := plainPrefix(s.data[i:]); n > 0 {
			b = append(b, s.data[i:i+n]...)
			if i += n; i == len(s.data) {
				break
			}
		}
		c := s.data[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			b = append(b, c) // a byte of a multi-byte character
			continue
		}
		if c == '"' {
			s.pos = i + 1
			s.scratch = b
			if !utf8.Valid(b) {
				s.failed = true
				return nil
			}
			return b
		}
		if c < 0x20 || i+1 >= len(s.data) {
			break
		}
		i++
		switch s.data[i] {
		case '"', '\\', '/':
			b = append(b, s.data[i])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(s.data[i+1:])
			if !ok {
				s.failed = true
				return nil
			}
			i += 4
			if utf16.IsSurrogate(r) {
				// Only a valid pair; encoding/json turns the rest into
				// U+FFFD.
				if i+6 >= len(s.data) || s.data[i+1] != '\\' || s.data[i+2] != 'u' {
					s.failed = true
					return nil
				}
				r2, ok := hex4(s.data[i+3:])
				dec := utf16.DecodeRune(r, r2)
				if !ok || dec == utf8.RuneError {
					s.failed = true
					return nil
				}
				r = dec
				i += 6
			}
			b = utf8.AppendRune(b, r)
		default:
			s.failed = true
			return nil
		}
	}
	s.failed = true
	return nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// String reads a string.
func (s *Scanner) String() string {
	b := s.str()
	if s.failed {
		return ""
	}
	return string(b)
}

// Bytes reads a string of base64, as encoding/json reads a []byte.
func (s *Scanner) Bytes() []byte {
	b := s.str()
	if s.failed {
		return nil
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(out, b)
	if err != nil {
		s.failed = true
		return nil
	}
	return out[:n]
}

// Time reads a time as time.Time's UnmarshalJSON does, from the string
// literal as it is written (encoding/json hands it over unescaped too).
func (s *Scanner) Time() time.Time {
	var t time.Time
	if s.failed || s.peek() != '"' {
		s.failed = true
		return t
	}
	start := s.pos
	s.str()
	if s.failed {
		return t
	}
	if err := t.UnmarshalJSON(s.data[start:s.pos]); err != nil {
		s.failed = true
	}
	return t
}

// Bool reads true or false.
func (s *Scanner) Bool() bool {
	if s.failed {
		return false
	}
	switch s.peek() {
	case 't':
		if len(s.data)-s.pos >= 4 && string(s.data[s.pos:s.pos+4]) == "true" {
			s.pos += 4
			return true
		}
	case 'f':
		if len(s.data)-s.pos >= 5 && string(s.data[s.pos:s.pos+5]) == "false" {
			s.pos += 5
			return false
		}
	}
	s.failed = true
	return false
}

// number reads a JSON number and returns its text and whether it is an
// integer (no fraction, no exponent).
func (s *Scanner) number() ([]byte, bool) {
	if s.failed {
		return nil, false
	}
	s.ws()
	d, start := s.data, s.pos
	i := start
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		s.failed = true
		return nil, false
	}
	integer := true
	if i < len(d) && d[i] == '.' {
		integer = false
		i++
		j := i
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
		if i == j {
			s.failed = true
			return nil, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
		if i == j {
			s.failed = true
			return nil, false
		}
	}
	s.pos = i
	return d[start:i], integer
}

// Int reads an integer that fits in bits.
func (s *Scanner) Int(bits int) int64 {
	if s.failed {
		return 0
	}
	s.ws()
	d, i := s.data, s.pos
	neg := i < len(d) && d[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			u = u*10 + uint64(d[i]-'0')
			i++
		}
	default:
		s.failed = true
		return 0
	}
	// A fraction or an exponent is not an integer (encoding/json refuses
	// it for an integer field); 20 digits may overflow.
	if i < len(d) && (d[i] == '.' || d[i] == 'e' || d[i] == 'E') || i-start > 19 {
		s.failed = true
		return 0
	}
	limit := uint64(1) << (bits - 1)
	if !neg && u >= limit || neg && u > limit {
		s.failed = true
		return 0
	}
	s.pos = i
	if neg {
		return -int64(u)
	}
	return int64(u)
}

// Uint reads an unsigned integer that fits in bits.
func (s *Scanner) Uint(bits int) uint64 {
	b, integer := s.number()
	if s.failed {
		return 0
	}
	if !integer || b[0] == '-' || len(b) > 20 {
		s.failed = true
		return 0
	}
	u, err := strconv.ParseUint(unsafe.String(&b[0], len(b)), 10, bits)
	if err != nil {
		s.failed = true
	}
	return u
}

// Float reads a number as a float of bits 32 or 64.
func (s *Scanner) Float(bits int) float64 {
	b, _ := s.number()
	if s.failed {
		return 0
	}
	f, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), bits)
	if err != nil || math.IsInf(f, 0) {
		s.failed = true
	}
	return f
}

// Skip reads any value, checking that it is well formed.
func (s *Scanner) Skip() { s.skip(0) }

func (s *Scanner) skip(depth int) {
	if s.failed {
		return
	}
	if depth > maxDepth {
		s.failed = true
		return
	}
	switch c := s.peek(); {
	case c == '"':
		s.skipString()
	case c == '{':
		s.pos++
		for more := s.First('}'); more; more = s.Next('}') {
			s.skipString()
			if s.failed || s.peek() != ':' {
				s.failed = true
				return
			}
			s.pos++
			s.skip(depth + 1)
		}
	case c == '[':
		s.pos++
		for more := s.First(']'); more; more = s.Next(']') {
			s.skip(depth + 1)
		}
	case c == 't' || c == 'f':
		s.Bool()
	case c == 'n':
		s.Null()
	default:
		s.number()
	}
}

// skipString passes over a string, checking its escapes as encoding/json
// does (any other byte from 0x20 up is fine there).
func (s *Scanner) skipString() {
	if s.failed || s.peek() != '"' {
		s.failed = true
		return
	}
	d := s.data
	for i := s.pos + 1; i < len(d); i++ {
		// As in str: most bytes of a field nobody reads need no look.
		if i += plainPrefix(d[i:]); i == len(d) {
			break
		}
		switch c := d[i]; {
		case c == '"':
			s.pos = i + 1
			return
		case c < 0x20:
			s.failed = true
			return
		case c == '\\':
			i++
			if i >= len(d) {
				s.failed = true
				return
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := hex4(d[i+1:]); !ok {
					s.failed = true
					return
				}
				i += 4
			default:
				s.failed = true
				return
			}
		}
	}
	s.failed = true
}

// Fold returns the index of the name that key matches without regard to
// case (as encoding/json matches a key to a field when none matches
// exactly), or -1.
func Fold(key []byte, names []string) int {
	for i, n := range names {
		if strings.EqualFold(unsafe.String(unsafe.SliceData(key), len(key)), n) {
			return i
		}
	}
	return -1
}

// Exact returns the index of the name that key is, or -1.
func Exact(key []byte, names []string) int {
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	return -1
}
