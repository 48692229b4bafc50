package wordcount

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strings"
)

// common are frequent English words; the corpus draws from them and from
// made-up words, with Zipf-distributed frequencies as in real text.
var common = strings.Fields(`the of and to a in is it you that he was for on are with as I his they be
at one have this from or had by hot word but what some we can out other were all there when up use your
how said an each she which do their time if will way about many then them write would like so these her
long make thing see him two has look more day could go come did number sound no most people my over know
water than call first who may down side been now find any new work part take get place made live where
after back little only round man year came show every good me give our under name very through just form
sentence great think say help low line differ turn cause much mean before move right boy old too same tell`)

var syllables = strings.Fields("ka lo mi ne ru sa te vi zo pa de fi gu ho ja")

// Corpus writes a text of about words words in lines of 4 to 16 words,
// the same text for the same seed on every machine.
func Corpus(w io.Writer, words int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vocab := append([]string{}, common...)
	for len(vocab) < 20000 {
		n := 2 + r.IntN(3)
		var b strings.Builder
		for range n {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		vocab = append(vocab, b.String())
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	bw := bufio.NewWriterSize(w, 1<<16)
	for written := 0; written < words; {
		n := min(4+r.IntN(13), words-written)
		for i := range n {
			if i > 0 {
				bw.WriteByte(' ')
			}
			bw.WriteString(vocab[zipf.Uint64()])
		}
		bw.WriteByte('\n')
		written += n
	}
	return bw.Flush()
}

// CountWords is the hand-written word count the generated program is
// measured and checked against: one goroutine, a bufio.Scanner and a map.
func CountWords(r io.Reader) (map[string]int64, error) {
	counts := map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 256<<10), 1<<20)
	for sc.Scan() {
		for _, w := range strings.Fields(sc.Text()) {
			counts[w]++
		}
	}
	return counts, sc.Err()
}
