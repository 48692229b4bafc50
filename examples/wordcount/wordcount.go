// Package wordcount is pipegen's first example: count the words of a text.
//
// pipeline.yaml wires these functions into a job: read lines, split them
// into words, count the words per word (keyed state), and write one count
// per word when the input ends. The //pipegen: directives below describe
// the same job in Go (docs/annotations.md); a test checks that both give
// the same program.
package wordcount

import "strings"

//pipegen:pipeline wordcount parallelism=2
//pipegen:source lines connector=file path=input.txt
//pipegen:sink out input=counts connector=file path=out format=jsonl

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
//
//pipegen:flatmap words input=lines
func SplitWords(line string, emit func(Word)) {
	for w := range strings.FieldsSeq(line) {
		emit(Word{Text: w})
	}
}

// WordKey keys a word by its text.
func WordKey(w Word) string { return w.Text }

// AddWord counts one more occurrence.
//
//pipegen:aggregate counts input=words key=WordKey result=EmitCount emit=final
func AddWord(acc *Count, _ Word) { acc.N++ }

// EmitCount makes the output record of a word.
func EmitCount(word string, acc *Count) WordCount {
	return WordCount{Word: word, Count: acc.N}
}
