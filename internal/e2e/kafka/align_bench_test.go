package e2ekafka_test

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/kafkatest"
	"github.com/pipegen/pipegen/internal/peakrss"
	"github.com/pipegen/pipegen/verify"
)

// backlogRecords is how many records each of the two partitions of
// BenchmarkKafkaAlignment's topic holds.
const backlogRecords = 200000

// BenchmarkKafkaAlignment runs event-time windows over a topic of two
// partitions at parallelism 1, one partition ahead of the other in event
// time, with and without timestamps.max-drift 1s (backlog.yaml and
// backlog-unaligned.yaml), in turns within every iteration. lead=50s is a
// backlog read beside a partition that is up to date: the partition
// ahead waits most of the run. lead=5s keeps the partitions 5 s apart
// throughout, so that with the alignment they are read in turns at the
// drift, paused and resumed over and over. Every record has a key of its
// own, so that the windows that wait for the slower partition's watermark
// are the state; records of 100 random bytes keep a fetch to about 10,000
// records. It reports each program's peak resident memory (its own, see
// peakrss), its CPU and wall time, and the ratios aligned / unaligned;
// each run's output is checked to hold one window a record.
//
//	go test ./internal/e2e/kafka -run '^$' -bench KafkaAlignment -benchtime 3x
func BenchmarkKafkaAlignment(b *testing.B) {
	leads := []time.Duration{50 * time.Second, 5 * time.Second}
	topics := map[string]int32{}
	for _, lead := range leads {
		topics[fmt.Sprint("in-", lead)] = 2
	}
	c, err := kafkatest.Start(0, topics)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()[0]
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(3, 4))
	pad := make([]byte, 90)
	for _, lead := range leads {
		var recs []*kgo.Record
		for i := range backlogRecords {
			for p := range 2 {
				ts := base.Add(time.Duration(i) * 250 * time.Microsecond) // 4,000 a second, 50 s
				if p == 1 {
					ts = ts.Add(lead)
				}
				for j := range pad {
					pad[j] = 'a' + byte(rnd.IntN(26))
				}
				recs = append(recs, &kgo.Record{Partition: int32(p), Value: fmt.Appendf(nil, "k%d-%d %s", p, i, pad), Timestamp: ts})
			}
		}
		if err := kafkatest.ProduceManual(brokers, fmt.Sprint("in-", lead), recs...); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	bins := map[string]string{}
	for name, file := range map[string]string{"aligned": "backlog.yaml", "unaligned": "backlog-unaligned.yaml"} {
		res, err := compile.Generate(file, compile.Options{})
		if err != nil {
			b.Fatal(err)
		}
		bins[name] = filepath.Join(dir, name)
		if err := res.Build(bins[name]); err != nil {
			b.Fatal(err)
		}
	}
	for _, lead := range leads {
		b.Run(fmt.Sprint("lead=", lead), func(b *testing.B) {
			benchAlignment(b, bins, brokers, fmt.Sprint("in-", lead))
		})
	}
}

// benchAlignment runs the aligned and the unaligned program (bins) over
// topic in turns, b.N times each, and reports what BenchmarkKafkaAlignment
// says.
func benchAlignment(b *testing.B, bins map[string]string, brokers, topic string) {
	type config struct {
		name      string
		peakMiB   int64
		cpu, wall time.Duration
	}
	configs := []*config{{name: "aligned"}, {name: "unaligned"}}
	dir := b.TempDir()
	run := 0
	for range b.N {
		for _, cf := range configs {
			run++
			work := filepath.Join(dir, fmt.Sprint(run))
			cmd := exec.Command(bins[cf.name], "run", "--quiet", "--checkpoint-dir", filepath.Join(work, "checkpoints"),
				"--set", "sources.in.brokers="+brokers, "--set", "sources.in.topic="+topic, "--set", "sinks.out.path="+filepath.Join(work, "out"))
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			peak := peakrss.Watch(cmd.Process.Pid)
			if err := cmd.Wait(); err != nil {
				b.Fatalf("%s: %v\n%s", cf.name, err, out.String())
			}
			cf.wall += time.Since(start)
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cf.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			p, err := peak()
			if err != nil {
				b.Fatal(err)
			}
			cf.peakMiB = max(cf.peakMiB, p>>20)
			lines, err := verify.ReadCommitted(filepath.Join(work, "out"))
			if err != nil {
				b.Fatal(err)
			}
			if len(lines) != 2*backlogRecords {
				b.Fatalf("%s: %d windows written, want one a record, %d", cf.name, len(lines), 2*backlogRecords)
			}
		}
	}
	al, un := configs[0], configs[1]
	for _, cf := range configs {
		b.ReportMetric(float64(cf.peakMiB), cf.name+"-peak-MiB")
		b.ReportMetric(cf.cpu.Seconds()/float64(b.N), cf.name+"-cpu-s")
		b.ReportMetric(cf.wall.Seconds()/float64(b.N), cf.name+"-wall-s")
	}
	b.ReportMetric(float64(al.peakMiB)/float64(un.peakMiB), "peak-aligned/unaligned")
	b.ReportMetric(al.cpu.Seconds()/un.cpu.Seconds(), "cpu-aligned/unaligned")
	b.ReportMetric(al.wall.Seconds()/un.wall.Seconds(), "wall-aligned/unaligned")
	b.ReportMetric(0, "ns/op")
}
