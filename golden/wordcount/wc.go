// Package wc is the golden case of the word count: file source, flatmap
// with an emit function, aggregate emitting when the input ends.
package wc

import "strings"

type Word struct{ Text string }

type Count struct{ N int64 }

type WordCount struct {
	Word  string `json:"word"`
	Count int64  `json:"count"`
}

func SplitWords(line string, emit func(Word)) {
	for w := range strings.FieldsSeq(strings.ToLower(line)) {
		emit(Word{Text: strings.Trim(w, ".,;:!?\"'")})
	}
}

func WordKey(w Word) string { return w.Text }

func AddWord(acc *Count, _ Word) { acc.N++ }

func EmitCount(word string, acc *Count) WordCount { return WordCount{Word: word, Count: acc.N} }
