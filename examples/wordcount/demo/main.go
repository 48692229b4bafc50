// Command demo runs the word count example end to end: it writes a corpus,
// runs the program pipegen compiled from ../pipeline.yaml on it with
// checkpoints, kills it with SIGKILL in the middle of its work, runs the
// same command again (it resumes from its newest checkpoint), prints the
// most frequent words, and checks every count against an independent,
// hand-written count of the same text: the output is exact, as if the crash
// had not happened.
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
	words := flag.Int("words", 20_000_000, "words in the generated corpus")
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
	// Two files, so that both source subtasks have work.
	input := filepath.Join(work, "input")
	step("writing a corpus of %d words to %s", words, input)
	if err := writeCorpus(input, words); err != nil {
		return err
	}
	args := []string{"run", "--parallelism=2", "--set", "sources.lines.path=input", "--set", "checkpoint.interval=200ms"}

	step("running %s (parallelism 2, a checkpoint every 200ms)", filepath.Base(program))
	cmd := exec.Command(program, args...)
	cmd.Dir = work
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Kill it once two checkpoints are complete: in the middle of its work.
	killed := false
	for !killed {
		select {
		case err := <-exited:
			return fmt.Errorf("the program ended (%v) before it could be killed: run the demo with more -words", err)
		case <-time.After(10 * time.Millisecond):
		}
		if m, _ := filepath.Glob(filepath.Join(work, "checkpoints", "chk-*", "MANIFEST")); len(m) >= 2 {
			step("kill -9 after %s", time.Since(start).Round(time.Millisecond))
			if err := cmd.Process.Kill(); err != nil {
				return err
			}
			<-exited
			killed = true
		}
	}
	partial, _ := readOutput(filepath.Join(work, "out"))
	step("committed output after the crash: %d words (the rest comes with the final checkpoint)", len(partial))

	step("%s checkpoints", filepath.Base(program))
	list := exec.Command(program, "checkpoints")
	list.Dir = work
	list.Stdout, list.Stderr = os.Stdout, os.Stderr
	if err := list.Run(); err != nil {
		return err
	}

	step("running the same command again: it resumes from its newest checkpoint")
	cmd = exec.Command(program, args...)
	cmd.Dir = work
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the program failed: %w", err)
	}
	elapsed := time.Since(start)

	got, err := readOutput(filepath.Join(work, "out"))
	if err != nil {
		return err
	}
	step("top words of %d distinct (%.1fM words/s, crash and recovery included):", len(got), float64(words)/elapsed.Seconds()/1e6)
	top := slices.SortedFunc(func(yield func(wordcount.WordCount) bool) {
		for w, n := range got {
			if !yield(wordcount.WordCount{Word: w, Count: n}) {
				return
			}
		}
	}, func(a, b wordcount.WordCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Word, b.Word))
	})
	for _, wc := range top[:min(10, len(top))] {
		fmt.Printf("  %-10s %8d\n", wc.Word, wc.Count)
	}

	want := map[string]int64{}
	files, _ := filepath.Glob(filepath.Join(input, "*.txt"))
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		counts, err := wordcount.CountWords(f)
		f.Close()
		if err != nil {
			return err
		}
		for w, n := range counts {
			want[w] += n
		}
	}
	if diff := compare(got, want); diff != "" {
		return fmt.Errorf("the output differs from an independent count: %s", diff)
	}
	step("exact: every one of the %d counts matches an independent count of the input, despite the crash", len(want))
	return nil
}

func step(format string, args ...any) {
	fmt.Printf("==> "+format+"\n", args...)
}

func writeCorpus(dir string, words int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range 2 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%d.txt", i)))
		if err != nil {
			return err
		}
		if err := wordcount.Corpus(f, words/2, uint64(i+1)); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
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
