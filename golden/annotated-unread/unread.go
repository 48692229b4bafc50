// Package unread is the golden case of the warning about nodes whose
// records reach no sink, written as directives (the YAML twin is
// golden/unread-warning).
package unread

import "strings"

//pipegen:pipeline unread
//pipegen:sink out input=upper connector=stdout

// Words makes nine words.
//
//pipegen:source words connector=generator
func Words(seq uint64) (string, bool) {
	return []string{"a", "bb", "ccc"}[seq%3], seq < 9
}

// Upper upper-cases a word, for "out"; "flagged" reaches no sink.
//
//pipegen:map upper input=words
//pipegen:map flagged input=audit
func Upper(w string) string { return strings.ToUpper(w) }

// Long keeps the longer words, but nothing reads what it keeps.
//
//pipegen:filter audit input=words
func Long(w string) bool { return len(w) > 1 }
