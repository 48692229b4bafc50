// Command demo runs the word count example end to end: it writes a corpus,
// runs the program pipegen compiled from ../pipeline.yaml on it, prints the
// most frequent words, and checks every count against an independent,
// hand-written count of the same text.
//
//	go run ./examples/wordcount/demo -program bin/wordcount -work bin/demo
//
// `make demo` builds pipegen and the program first.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/pipegen/pipegen/examples/wordcount"
)

func main() {
	program := flag.String("program", "bin/wordcount", "the compiled word count program")
	work := flag.String("work", "bin/demo", "working directory for input and output")
	words := flag.Int("words", 2_000_000, "words in the generated corpus")
	flag.Parse()
	if err := demo(*program, *work, *words); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func demo(program, work string, words int) error {
	program, err := filepath.Abs(program)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	input := filepath.Join(work, "input.txt")
	step("writing a corpus of %d words to %s", words, input)
	if err := writeCorpus(input, words); err != nil {
		return err
	}

	step("running %s (parallelism 2)", filepath.Base(program))
	cmd := exec.Command(program, "run", "--parallelism=2")
	cmd.Dir = work
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the program failed: %w", err)
	}
	elapsed := time.Since(start)

	got, err := readOutput(filepath.Join(work, "out"))
	if err != nil {
		return err
	}
	step("top words of %d distinct (%.1fM words/s):", len(got), float64(words)/elapsed.Seconds()/1e6)
	top := slices.SortedFunc(func(yield func(wordcount.WordCount) bool) {
		for w, n := range got {
			if !yield(wordcount.WordCount{Word: w, Count: n}) {
				return
			}
		}
	}, func(a, b wordcount.WordCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Word, b.Word)) })
	for _, wc := range top[:min(10, len(top))] {
		fmt.Printf("  %-10s %8d\n", wc.Word, wc.Count)
	}

	f, err := os.Open(input)
	if err != nil {
		return err
	}
	defer f.Close()
	want, err := wordcount.CountWords(f)
	if err != nil {
		return err
	}
	if diff := compare(got, want); diff != "" {
		return fmt.Errorf("the output differs from an independent count: %s", diff)
	}
	step("exact: every one of the %d counts matches an independent count of the input", len(want))
	return nil
}

func step(format string, args ...any) {
	fmt.Printf("==> "+format+"\n", args...)
}

func writeCorpus(path string, words int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := wordcount.Corpus(f, words, 1); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readOutput reads the committed output: the sink directory's files whose
// names do not start with '.'.
func readOutput(dir string) (map[string]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, e := range entries {
		if e.IsDir() || e.Name()[0] == '.' {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var wc wordcount.WordCount
			if err := json.Unmarshal(sc.Bytes(), &wc); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", e.Name(), err)
			}
			if _, dup := counts[wc.Word]; dup {
				f.Close()
				return nil, fmt.Errorf("%q appears twice in the output", wc.Word)
			}
			counts[wc.Word] = wc.Count
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return counts, nil
}

func compare(got, want map[string]int64) string {
	for w, n := range want {
		if got[w] != n {
			return fmt.Sprintf("%q: %d, want %d", w, got[w], n)
		}
	}
	for w := range got {
		if _, ok := want[w]; !ok {
			return fmt.Sprintf("%q is not in the input", w)
		}
	}
	return ""
}
