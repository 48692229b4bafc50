package e2ekafka_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/internal/kafkatest"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// benchRecords is the input of every run of BenchmarkKafka.
const benchRecords = 500000

// BenchmarkKafka runs the job Kafka -> map -> Kafka (passthrough.yaml)
// through a kfake cluster in this process, over benchRecords records in 4
// partitions, at parallelism 1 and 2, each in exactly-once and
// at-least-once (checkpoints every 200ms), in turns within every
// iteration so that the machine's load falls on all alike. It reports
// the records per second of each, from the program's start to its exit,
// and the ratio exactly-once / at-least-once at each parallelism.
//
//	go test ./internal/e2e/kafka -run '^$' -bench Kafka -benchtime 3x
func BenchmarkKafka(b *testing.B) {
	c, err := kafkatest.Start(0, map[string]int32{"in": 4})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()[0]
	recs := make([]*kgo.Record, benchRecords)
	for i := range recs {
		recs[i] = &kgo.Record{Value: fmt.Appendf(nil, "record %d of the benchmark's input", i)}
	}
	if err := kafkatest.Produce(brokers, "in", recs...); err != nil {
		b.Fatal(err)
	}
	res, err := compile.Generate("passthrough.yaml", compile.Options{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "passthrough")
	if err := res.Build(bin); err != nil {
		b.Fatal(err)
	}
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		b.Fatal(err)
	}
	defer adm.Close()

	type config struct {
		name string
		p    int
		mode string
		took time.Duration
	}
	configs := []*config{
		{name: "eo-p1", p: 1, mode: "exactly-once"},
		{name: "alo-p1", p: 1, mode: "at-least-once"},
		{name: "eo-p2", p: 2, mode: "exactly-once"},
		{name: "alo-p2", p: 2, mode: "at-least-once"},
	}
	run := 0
	b.ResetTimer()
	for range b.N {
		for _, cf := range configs {
			run++
			topic := fmt.Sprintf("out-%d", run)
			if _, err := kadm.NewClient(adm).CreateTopic(context.Background(), 4, 1, nil, topic); err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(bin, "run", "--quiet", "--parallelism", fmt.Sprint(cf.p),
				"--checkpoint-dir", filepath.Join(dir, topic), "--set", "checkpoint.mode="+cf.mode,
				"--set", "sources.in.brokers="+brokers, "--set", "sinks.out.brokers="+brokers,
				"--set", "sinks.out.topic="+topic, "--set", "sinks.out.transactional-id="+topic)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", cf.name, err, out)
			}
			cf.took += time.Since(start)
		}
	}
	b.StopTimer()
	rate := map[string]float64{}
	for _, cf := range configs {
		rate[cf.name] = float64(benchRecords*b.N) / cf.took.Seconds()
		b.ReportMetric(rate[cf.name], cf.name+"-rec/s")
	}
	b.ReportMetric(rate["eo-p1"]/rate["alo-p1"], "eo/alo-p1")
	b.ReportMetric(rate["eo-p2"]/rate["alo-p2"], "eo/alo-p2")
	b.ReportMetric(rate["eo-p2"]/rate["eo-p1"], "eo-p2/p1")
	b.ReportMetric(0, "ns/op")
}
