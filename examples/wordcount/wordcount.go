// Package wordcount is pipegen's first example: count the words of a text.
//
// pipeline.yaml wires these functions into a job: read lines, split them
// into words, count the words per word (keyed state), and write one count
// per word when the input ends.
package wordcount

import "strings"

// Word is one word of the text.
type Word struct {
	Text string
}

// Count is the state kept per word.
type Count struct {
	N int64
}

// WordCount is one line of the output.
type WordCount struct {
	Word  string `json:"word"`
	Count int64  `json:"count"`
}

// SplitWords emits the words of a line: runs of characters between spaces.
func SplitWords(line string, emit func(Word)) {
	for w := range strings.FieldsSeq(line) {
		emit(Word{Text: w})
	}
}

// WordKey keys a word by its text.
func WordKey(w Word) string { return w.Text }

// AddWord counts one more occurrence.
func AddWord(acc *Count, _ Word) { acc.N++ }

// EmitCount makes the output record of a word.
func EmitCount(word string, acc *Count) WordCount {
	return WordCount{Word: word, Count: acc.N}
}
