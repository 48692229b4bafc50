// Command nexmark runs the hand-written Nexmark programs and writes the
// generator's events as JSON lines. The events are those of the
// environment, as the pipelines' (NEXMARK_EVENTS, NEXMARK_RATE,
// NEXMARK_SEED: see nexmark.ConfigFromEnv).
//
//	nexmark hand QUERY [FILE...]   run the hand-written QUERY (gen, q0, ...) on the
//	                               generator's events, or on JSON lines FILEs read
//	                               one after the other; its output goes to stdout
//	nexmark jsonl DIR K            write the events to K files DIR/events-I.jsonl:
//	                               event n to file n%K, as a generator source of
//	                               parallelism K would make them
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pipegen/pipegen/examples/nexmark"
	"github.com/pipegen/pipegen/examples/nexmark/hand"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nexmark:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg := nexmark.ConfigFromEnv()
	g := nexmark.NewGenerator(cfg)
	switch {
	case len(args) >= 2 && args[0] == "hand":
		next := hand.Generated(g)
		if files := args[2:]; len(files) > 0 {
			var readers []io.Reader
			for _, name := range files {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				defer f.Close()
				readers = append(readers, f)
			}
			next = hand.JSONLines(io.MultiReader(readers...))
		}
		return hand.Run(args[1], next, os.Stdout)
	case len(args) == 3 && args[0] == "jsonl":
		k, err := strconv.Atoi(args[2])
		if err != nil || k < 1 {
			return fmt.Errorf("jsonl wants a number of files, got %q", args[2])
		}
		return writeJSONL(g, args[1], k)
	}
	return fmt.Errorf("usage: nexmark hand QUERY [FILE...] | nexmark jsonl DIR FILES")
}

func writeJSONL(g *nexmark.Generator, dir string, k int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range k {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("events-%d.jsonl", i)))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		var buf []byte
		for n := uint64(i); n < g.Config().Events; n += uint64(k) {
			e := g.Event(n)
			buf = hand.AppendEvent(buf[:0], &e)
			w.Write(buf)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
