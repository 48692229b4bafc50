package e2ekafka_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pipegen/pipegen/compile"
	e2ekafka "github.com/pipegen/pipegen/internal/e2e/kafka"
	"github.com/pipegen/pipegen/internal/kafkatest"
	"github.com/pipegen/pipegen/verify"
)

const (
	numLines = 500000
	seed     = 20261201
	kills    = 5
)

func lines() (in, want []string) {
	for i := range numLines {
		l := fmt.Sprintf("line %d of %d", i, numLines)
		in = append(in, l)
		want = append(want, e2ekafka.Tag(l))
	}
	slices.Sort(want)
	return in, want
}

func cluster(t *testing.T, topics map[string]int32) string {
	t.Helper()
	c, err := kafkatest.Start(0, topics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func build(t *testing.T, pipeline string) (*compile.Result, string) {
	t.Helper()
	res, err := compile.Generate(pipeline, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, t.TempDir()
}

// TestKafkaToFile kills a job that reads a topic into the file sink: its
// committed files hold every line once, as in a run without kills. The
// records' Kafka timestamps are their event time, those of partitions 1
// and 2 five seconds ahead of partition 0's, and the source keeps its two
// subtasks and their partitions within a second of each other's
// watermarks (tofile.yaml): the subtask that reads partitions 0 and 2
// pauses partition 2 whenever it gets a second ahead of partition 0, its
// fetched records unread, and the other subtask waits for the first, also
// across the kills (a scratch build that logged the pauses saw them in the
// clean run and in killed processes).
func TestKafkaToFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job many times")
	}
	brokers := cluster(t, map[string]int32{"in": 3})
	in, want := lines()
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for i, l := range in {
		p := int32(i % 3)
		ts := base.Add(time.Duration(i/3) * time.Millisecond)
		if p > 0 {
			ts = ts.Add(5 * time.Second)
		}
		recs = append(recs, &kgo.Record{Partition: p, Value: []byte(l), Timestamp: ts})
	}
	if err := kafkatest.ProduceManual(brokers, "in", recs...); err != nil {
		t.Fatal(err)
	}
	res, dir := build(t, "tofile.yaml")
	v, err := verify.NewVerifier(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := v.Verify(verify.Options{Kills: kills, Seed: seed, Sets: []string{"sources.in.brokers=" + brokers}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean run %s, killed run %s: %d kills, %d resumed from a checkpoint", rep.Clean.Duration, rep.Killed.Duration, rep.Killed.Kills, rep.Killed.Resumed)
	if rep.Killed.Resumed == 0 {
		t.Errorf("no process resumed from a checkpoint: the kills proved nothing")
	}
	kafkatest.Compare(t, "clean run", want, rep.Clean.Output["out"])
	kafkatest.Compare(t, "killed run", want, rep.Killed.Output["out"])
}

// TestFileToKafka kills a job that writes a file's lines to a topic: a
// read_committed consumer reads every line once.
func TestFileToKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job many times")
	}
	brokers := cluster(t, map[string]int32{"clean": 3, "killed": 3})
	in, want := lines()
	res, dir := build(t, "fromfile.yaml")
	input := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(input, []byte(strings.Join(in, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fromfile")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	v := &verify.Verifier{Binary: bin, Pipeline: "fromfile", Dir: dir, Timeout: 3 * time.Minute, CPUKills: verify.CPUClock()}
	args := func(topic string) []string {
		return []string{"--quiet", "--set", "sources.in.path=" + input, "--set", "sinks.out.brokers=" + brokers,
			"--set", "sinks.out.topic=" + topic, "--set", "sinks.out.transactional-id=fromfile-" + topic}
	}
	clean, err := v.Run("clean", args("clean")...)
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Compare(t, "clean run", want, kafkatest.Committed(t, brokers, "clean"))
	delays := verify.KillDelays(rand.New(rand.NewPCG(seed, 1)), kills, v.KillSpan(clean))
	killed, err := v.RunWithKills("killed", delays, append(args("killed"), "--set", "checkpoint.interval="+verify.CheckpointInterval(clean.Duration, kills).String())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean run %s, killed run %s: %d kills, %d resumed from a checkpoint", clean.Duration, killed.Duration, killed.Kills, killed.Resumed)
	if killed.Resumed == 0 {
		t.Errorf("no process resumed from a checkpoint: the kills proved nothing")
	}
	kafkatest.Compare(t, "killed run", want, kafkatest.Committed(t, brokers, "killed"))
}

// TestKafkaTimestamps runs event-time windows over the records' Kafka
// timestamps (timestamps without extract), with 3 partitions read by 2
// subtasks, and compares every window's count with one computed from the
// input.
func TestKafkaTimestamps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	brokers := cluster(t, map[string]int32{"in": 3})
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	want := map[string]int64{}
	var recs []*kgo.Record
	for i := range 3000 {
		word := fmt.Sprintf("w%d", i%5)
		ts := base.Add(time.Duration(i*7%5000) * time.Millisecond) // out of order within each partition
		recs = append(recs, &kgo.Record{Partition: int32(i % 3), Value: []byte(word + " " + fmt.Sprint(i)), Timestamp: ts})
		want[fmt.Sprintf(`{"word":"%s","start":%d,"n":`, word, ts.Truncate(time.Second).UnixMilli())]++
	}
	if err := kafkatest.ProduceManual(brokers, "in", recs...); err != nil {
		t.Fatal(err)
	}
	var wantLines []string
	for k, n := range want {
		wantLines = append(wantLines, fmt.Sprintf("%s%d}", k, n))
	}
	slices.Sort(wantLines)
	res, dir := build(t, "windows.yaml")
	v, err := verify.NewVerifier(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.Run("clean", "--quiet", "--set", "sources.in.brokers="+brokers)
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Compare(t, "windows", wantLines, r.Output["out"])
}
