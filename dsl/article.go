package dsl

import "strings"

// article returns word with "a" or "an" before it, by its first letter
// (good enough for the names of kinds: "an aggregate", "a union").
func article(word string) string {
	if word != "" && strings.ContainsRune("aeioAEIO", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
