package wordcount_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/wordcount"
	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

var (
	buildOnce sync.Once
	binary    string
	binDir    string // binary's folder, removed by TestMain
	buildErr  error
)

// program builds the example's pipeline once per test process.
func program(t testing.TB) string {
	buildOnce.Do(func() {
		var err error
		binDir, err = os.MkdirTemp("", "wordcount-bin-*")
		if err != nil {
			buildErr = err
			return
		}
		res, err := compile.Generate("pipeline.yaml", compile.Options{})
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(binDir, "wordcount")
		buildErr = res.Build(binary)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func writeCorpus(t testing.TB, dir string, words int) string {
	path := filepath.Join(dir, "input.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := wordcount.Corpus(f, words, 42); err != nil {
		t.Fatal(err)
	}
	return path
}

// readCounts reads every part file the sink wrote.
func readCounts(t testing.TB, dir string) map[string]int64 {
	files, err := filepath.Glob(filepath.Join(dir, "part-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no output in %s (%v)", dir, err)
	}
	counts := map[string]int64{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var wc wordcount.WordCount
			if err := json.Unmarshal(sc.Bytes(), &wc); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if _, dup := counts[wc.Word]; dup {
				t.Fatalf("word %q counted twice in the output", wc.Word)
			}
			counts[wc.Word] = wc.Count
		}
	}
	return counts
}

func run(t testing.TB, dir string, args ...string) {
	cmd := exec.Command(program(t), append([]string{"run", "--quiet"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wordcount %v: %v\n%s", args, err, out)
	}
}

// TestMatchesHandCount runs the generated program at several parallelisms
// and compares its output with the hand-written count of the same text.
func TestMatchesHandCount(t *testing.T) {
	dir := t.TempDir()
	input := writeCorpus(t, dir, 300_000)
	f, err := os.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	want, err := wordcount.CountWords(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2, 3} {
		out := filepath.Join(dir, fmt.Sprintf("out-%d", p))
		run(t, dir, fmt.Sprintf("--parallelism=%d", p), "--set", "sinks.out.path="+out, "--checkpoint-dir", out+"-checkpoints")
		got := readCounts(t, out)
		if len(got) != len(want) {
			t.Errorf("parallelism %d: %d distinct words, want %d", p, len(got), len(want))
		}
		for w, n := range want {
			if got[w] != n {
				t.Errorf("parallelism %d: %q counted %d times, want %d", p, w, got[w], n)
				break
			}
		}
	}
}

// BenchmarkWordcount counts the words of a corpus of 5M words with the
// generated program at parallelism 1 and with a hand-written Go loop
// doing the same work (wordcount.CountWords, then the counts written as
// JSON lines), each in a process of its own, in turns, and reports their
// ratio by CPU time (user and system: gen/hand-cpu, as Nexmark's table)
// and by wall time (gen/hand). The generated program also syncs its
// output and its final checkpoint to disk, which the hand loop does not;
// on a busy machine wall time says more of the machine than of either.
//
//	go test ./examples/wordcount -run '^$' -bench 'Wordcount$' -benchtime 5x
func BenchmarkWordcount(b *testing.B) {
	dir := b.TempDir()
	const words = 5_000_000
	input := writeCorpus(b, dir, words)
	bin := program(b)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var hand, gen, handCPU, genCPU time.Duration
	timed := func(cmd *exec.Cmd, wall, cpu *time.Duration) {
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		*wall += time.Since(start)
		*cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	for i := 0; b.Loop(); i++ {
		cmd := exec.Command(self, "-test.run=^TestHandLoop$")
		cmd.Env = append(os.Environ(), handInput+"="+input, handOutput+"="+filepath.Join(dir, "hand.jsonl"))
		timed(cmd, &hand, &handCPU)
		timed(exec.Command(bin, "run", "--quiet", "--parallelism=1", "--set", "sources.lines.path="+input, "--set", "sinks.out.path="+filepath.Join(dir, fmt.Sprintf("gen-%d", i)),
			"--checkpoint-dir", filepath.Join(dir, fmt.Sprintf("ckpt-%d", i))), &gen, &genCPU)
	}
	n := float64(b.N) * words
	b.ReportMetric(n/hand.Seconds(), "hand-words/s")
	b.ReportMetric(n/gen.Seconds(), "gen-words/s")
	b.ReportMetric(hand.Seconds()/gen.Seconds(), "gen/hand")
	b.ReportMetric(handCPU.Seconds()/genCPU.Seconds(), "gen/hand-cpu")
}

// The environment of TestHandLoop, which BenchmarkWordcount runs in a
// process of its own.
const (
	handInput  = "WORDCOUNT_HAND_INPUT"
	handOutput = "WORDCOUNT_HAND_OUTPUT"
)

// TestHandLoop is BenchmarkWordcount's hand-written word count: the
// counts of the words of $WORDCOUNT_HAND_INPUT, written as JSON lines to
// $WORDCOUNT_HAND_OUTPUT. Without them it is skipped.
func TestHandLoop(t *testing.T) {
	input, output := os.Getenv(handInput), os.Getenv(handOutput)
	if input == "" || output == "" {
		t.Skip("run by BenchmarkWordcount")
	}
	f, err := os.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := wordcount.CountWords(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(output)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for word, n := range counts {
		enc.Encode(wordcount.WordCount{Word: word, Count: n})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCheckpointOverhead runs the generated word count at parallelism
// 2 over a corpus of two files (one per source subtask), in turns with
// checkpoints every second and with checkpoint.mode=none, and reports the
// throughput ratio and the checkpoints' figures from their manifests:
//
//	go test ./examples/wordcount -run '^$' -bench CheckpointOverhead -benchtime 3x
func BenchmarkCheckpointOverhead(b *testing.B) {
	dir := b.TempDir()
	const words = 25_000_000 // per file
	input := twoFiles(b, dir, words)
	bin := program(b)
	var with, without time.Duration
	var stats []checkpointStats
	for i := 0; b.Loop(); i++ {
		for _, mode := range []string{"none", "exactly-once"} {
			ckpt := filepath.Join(dir, fmt.Sprintf("ckpt-%d-%s", i, mode))
			start := time.Now()
			cmd := exec.Command(bin, "run", "--quiet", "--parallelism=2",
				"--set", "sources.lines.path="+input,
				"--set", "sinks.out.path="+filepath.Join(dir, fmt.Sprintf("out-%d-%s", i, mode)),
				"--set", "checkpoint.mode="+mode, "--set", "checkpoint.interval=1s", "--set", "checkpoint.retain=1000",
				"--checkpoint-dir", ckpt)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			if mode == "none" {
				without += time.Since(start)
			} else {
				with += time.Since(start)
				stats = append(stats, readStats(b, ckpt)...)
			}
		}
	}
	n := float64(b.N) * 2 * words
	b.ReportMetric(n/without.Seconds(), "none-words/s")
	b.ReportMetric(n/with.Seconds(), "ckpt-words/s")
	b.ReportMetric(without.Seconds()/with.Seconds(), "ckpt/none")
	var dur, align time.Duration
	for _, s := range stats {
		dur += s.Duration
		align = max(align, s.Alignment)
	}
	if len(stats) > 0 {
		b.ReportMetric(float64(len(stats))/float64(b.N), "checkpoints/run")
		b.ReportMetric(float64(dur.Milliseconds())/float64(len(stats)), "ckpt-ms/op")
		b.ReportMetric(float64(align.Microseconds())/1000, "max-align-ms")
	}
}

type checkpointStats struct {
	Duration  time.Duration `json:"duration"`
	Alignment time.Duration `json:"alignment"`
}

// readStats reads the figures of a run's periodic (not final) checkpoints.
func readStats(b *testing.B, dir string) []checkpointStats {
	manifests, _ := filepath.Glob(filepath.Join(dir, "chk-*", "MANIFEST"))
	var out []checkpointStats
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		if err != nil {
			b.Fatal(err)
		}
		// The manifest is JSON followed by a checksum line.
		data = data[:bytes.LastIndex(data, []byte("crc32c "))]
		var man struct {
			Final bool            `json:"final"`
			Stats checkpointStats `json:"stats"`
		}
		if err := json.Unmarshal(data, &man); err != nil {
			b.Fatal(err)
		}
		if !man.Final {
			out = append(out, man.Stats)
		}
	}
	return out
}

// BenchmarkHTTPOverhead runs the generated word count at parallelism 2
// over two files, in turns without --http and with --http while a client
// scrapes /metrics every 100ms and /api/status every second (as the
// status page does), and reports the throughput ratio: what serving and
// reading the metrics costs. Counting itself is on in both (it always
// is); its cost is in gen/hand of BenchmarkWordcount.
//
//	go test ./examples/wordcount -run '^$' -bench HTTPOverhead -benchtime 5x
func BenchmarkHTTPOverhead(b *testing.B) {
	dir := b.TempDir()
	const words = 25_000_000 // per file
	input := twoFiles(b, dir, words)
	bin := program(b)
	var with, without time.Duration
	var scrapes int
	for i := 0; b.Loop(); i++ {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, served := range order {
			args := []string{"run", "--quiet", "--parallelism=2",
				"--set", "sources.lines.path=" + input,
				"--set", "sinks.out.path=" + filepath.Join(dir, fmt.Sprintf("out-%d-%v", i, served)),
				"--checkpoint-dir", filepath.Join(dir, fmt.Sprintf("ckpt-%d-%v", i, served))}
			if served {
				args = append(args, "--http", "127.0.0.1:0")
			}
			start := time.Now()
			n, err := runScraped(bin, args)
			if err != nil {
				b.Fatal(err)
			}
			if served {
				with += time.Since(start)
				scrapes += n
			} else {
				without += time.Since(start)
			}
		}
	}
	n := float64(b.N) * 2 * words
	b.ReportMetric(n/without.Seconds(), "plain-words/s")
	b.ReportMetric(n/with.Seconds(), "http-words/s")
	b.ReportMetric(without.Seconds()/with.Seconds(), "http/plain")
	b.ReportMetric(float64(scrapes)/float64(b.N), "scrapes/run")
}

// runScraped runs the program; when it serves HTTP, a client scrapes
// /metrics every 100ms and /api/status every second until it ends. It
// returns the number of scrapes of /metrics.
func runScraped(bin string, args []string) (int, error) {
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	var log strings.Builder
	addr := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if _, rest, ok := strings.Cut(sc.Text(), "status page at http://"); ok {
				a, _, _ := strings.Cut(rest, "/")
				addr <- a
			}
		}
		close(addr)
	}()
	done := make(chan struct{})
	scrapes := make(chan int, 1)
	go func() {
		n := 0
		defer func() { scrapes <- n }()
		a, ok := <-addr
		if !ok {
			return
		}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for k := 0; ; k++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if res, err := http.Get("http://" + a + "/metrics"); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				n++
			}
			if k%10 == 0 {
				if res, err := http.Get("http://" + a + "/api/status"); err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}
		}
	}()
	<-read // the end of its standard error: the program has exited
	err = cmd.Wait()
	close(done)
	n := <-scrapes
	if err != nil {
		return n, fmt.Errorf("%v\n%s", err, log.String())
	}
	return n, nil
}

// twoFiles writes a corpus of two files of words words each (one per
// source subtask at parallelism 2) into dir/input, and returns that
// folder.
func twoFiles(b *testing.B, dir string, words int) string {
	input := filepath.Join(dir, "input")
	os.MkdirAll(input, 0o755)
	for i := range 2 {
		f, err := os.Create(filepath.Join(input, fmt.Sprintf("part-%d.txt", i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := wordcount.Corpus(f, words, uint64(i+1)); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	return input
}

// TestMain removes the built program after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
