// Package unread is the golden case of the warning about nodes whose
// records reach no sink.
package unread

import "strings"

func Words(seq uint64) (string, bool) {
	return []string{"a", "bb", "ccc"}[seq%3], seq < 9
}

func WordTime(w string) int64   { return int64(len(w)) }
func Upper(w string) string     { return strings.ToUpper(w) }
func Long(w string) bool        { return len(w) > 1 }
func Self(w string) string      { return w }
func Longer(a, b string) string { return max(a, b) }
