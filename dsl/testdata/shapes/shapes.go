// Package shapes is a fixture of dsl's tests: every accepted signature
// shape of generators, flatmaps and maps.
package shapes

import (
	"strconv"
	"strings"
)

type Word struct {
	Text string
}

func Next(seq uint64) (string, bool) { return "a b", seq < 2 }

func NextWord(seq uint64, into *Word) bool {
	into.Text = "w"
	return seq < 2
}

func SplitEmit(line string, emit func(Word)) {
	for w := range strings.FieldsSeq(line) {
		emit(Word{Text: w})
	}
}

func SplitSlice(line string) []Word {
	var out []Word
	for w := range strings.FieldsSeq(line) {
		out = append(out, Word{Text: w})
	}
	return out
}

func Upper(w Word) Word { return Word{Text: strings.ToUpper(w.Text)} }

func Parse(w Word) (int, error) { return strconv.Atoi(w.Text) }
