package kafkacount_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/kafka"
	"github.com/pipegen/pipegen/internal/crashtest"
	"github.com/pipegen/pipegen/internal/kafkatest"
	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/verify"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// seedVar names the environment variable that replays a crash test.
const seedVar = "PIPEGEN_CRASH_SEED"

const defaultSeed = 20261201

// killsVar names the environment variable that sets the number of kills
// of TestCrash (5 by default): make kafka-soak raises it.
const killsVar = "PIPEGEN_CRASH_KILLS"

// The input: events over keys, keyed by their key, so that a key's events
// are in one partition, in order, and its running totals come out the
// same in every run.
const (
	numEvents = 200000
	numKeys   = 100
)

// eventsVar names the environment variable that sets the number of
// events (numEvents by default): make kafka-soak raises it, so that its
// many kills fall between checkpoints.
const eventsVar = "PIPEGEN_CRASH_EVENTS"

func eventCount() int {
	if n, err := strconv.Atoi(os.Getenv(eventsVar)); err == nil && n > 0 {
		return n
	}
	return numEvents
}

func seed(t *testing.T) uint64 {
	s := os.Getenv(seedVar)
	if s == "" {
		return defaultSeed
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("%s=%q: want a whole number above 0", seedVar, s)
	}
	return n
}

// setup starts a kfake cluster with the input in topic events, and builds
// the job; it returns the brokers, the program, a work directory and the
// expected output, as sorted JSON lines.
func setup(t *testing.T, outputs ...string) (brokers, bin, dir string, want []string) {
	t.Helper()
	return setupN(t, eventCount(), outputs...)
}

// setupN is setup with n input events.
func setupN(t *testing.T, n int, outputs ...string) (brokers, bin, dir string, want []string) {
	t.Helper()
	topics := map[string]int32{"events": 4}
	for _, o := range outputs {
		topics[o] = 3
	}
	c, err := kafkatest.Start(0, topics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers = c.ListenAddrs()[0]
	evs := kafkacount.Events(n, numKeys)
	var recs []*kgo.Record
	for _, e := range evs {
		v, _ := json.Marshal(e)
		recs = append(recs, &kgo.Record{Key: []byte(e.Key), Value: v})
	}
	if err := kafkatest.Produce(brokers, "events", recs...); err != nil {
		t.Fatal(err)
	}
	for _, r := range kafkacount.Expected(evs) {
		b, _ := json.Marshal(r)
		want = append(want, string(b))
	}
	slices.Sort(want)

	res, err := compile.Generate("pipeline.yaml", compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "kafkacount")
	if err := res.Build(bin); err != nil {
		t.Fatal(err)
	}
	return brokers, bin, dir, want
}

// args point the job at the cluster and make its source stop at the end
// of what the topic holds now.
func args(brokers, topic string) []string {
	return []string{"--quiet", "--set", "sources.events.brokers=" + brokers, "--set", "sinks.out.brokers=" + brokers,
		"--set", "sources.events.bounded=latest", "--set", "sinks.out.topic=" + topic,
		"--set", "sinks.out.transactional-id=kafkacount-" + topic}
}

// TestCrash runs the job Kafka -> keyed aggregate -> Kafka once without
// failures and once killed with SIGKILL at random moments (and started
// again after each kill), and checks that a read_committed consumer of
// each output topic gets exactly the answer computed from the input:
// every result once.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test builds and runs the job many times")
	}
	seed := seed(t)
	defer func() {
		if t.Failed() {
			t.Logf("kill moments drawn with seed %d: reproduce with %s=%d go test -count=1 -run TestCrash -v ./examples/kafka", seed, seedVar, seed)
		}
	}()
	brokers, bin, dir, want := setup(t, "clean", "killed")
	v := &verify.Verifier{Binary: bin, Pipeline: "kafkacount", Dir: dir, Timeout: 3 * time.Minute, CPUKills: verify.CPUClock()}
	clean, err := v.Run("clean", args(brokers, "clean")...)
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.Compare(t, "clean run", want, kafkatest.Committed(t, brokers, "clean"))

	kills := 5
	if k, err := strconv.Atoi(os.Getenv(killsVar)); err == nil && k > 0 {
		kills = k
	}
	delays := verify.KillDelays(rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), kills, v.KillSpan(clean))
	// Checkpoints between kills: many kills come close together.
	interval := verify.CheckpointInterval(clean.Duration, kills)
	killed, err := v.RunWithKills("killed", delays, append(args(brokers, "killed"), "--set", "checkpoint.interval="+interval.String())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean run %s; killed run %s with checkpoints every %s: %d kills, %d restarts, %d resumed from a checkpoint",
		clean.Duration.Round(time.Millisecond), killed.Duration.Round(time.Millisecond), interval, killed.Kills, killed.Restarts, killed.Resumed)
	if killed.Resumed == 0 {
		t.Errorf("no process resumed from a checkpoint: the kills proved nothing")
	}
	if killed.Failures > 0 {
		t.Errorf("the job failed by itself %d times: %s", killed.Failures, killed.FirstFailure)
	}
	kafkatest.Compare(t, "killed run", want, kafkatest.Committed(t, brokers, "killed"))
}

// TestRescale kills the job at 2 subtasks once checkpoints are complete,
// resumes it at 3, kills it again, and resumes it at 2 to the end: the
// partitions of the source, the key groups of the aggregate and the
// sink's transactions are shared out anew each time (the open
// transactions of the third subtask aborted when it is gone), and the
// committed output is still every result once.
func TestRescale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	// Four times the input of the other tests: at 3 subtasks the job
	// must still be running after its first checkpoint.
	brokers, bin, dir, want := setupN(t, 4*eventCount(), "rescaled")
	ckpt := filepath.Join(dir, "checkpoints")
	evFile := filepath.Join(dir, "events.jsonl")
	base := append(args(brokers, "rescaled"), "--checkpoint-dir", ckpt, "--events", evFile, "--set", "checkpoint.interval=20ms")

	// At 2 subtasks, killed once two checkpoints are complete; at 3,
	// killed once it has completed one of its own; at 2 again to the end.
	killAfter := func(p, more int) bool {
		t.Helper()
		checkpoints := crashtest.CountEvents(evFile, events.Checkpoint) + more
		cmd := exec.Command(bin, append([]string{"run", "--parallelism", fmt.Sprint(p)}, base...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.After(time.Minute)
		for crashtest.CountEvents(evFile, events.Checkpoint) < checkpoints {
			select {
			case err := <-exited:
				// It ended before it could be killed: at exit 0 the job
				// finished (nothing is left to rescale), else it failed.
				if err != nil {
					t.Fatalf("parallelism %d: %v before checkpoint %d:\n%s", p, err, checkpoints, stderr.String())
				}
				return false
			case <-deadline:
				cmd.Process.Kill()
				<-exited
				t.Fatalf("parallelism %d: no checkpoint %d within a minute:\n%s", p, checkpoints, stderr.String())
			case <-time.After(time.Millisecond):
			}
		}
		cmd.Process.Kill()
		return <-exited != nil
	}
	if !killAfter(2, 2) || !killAfter(3, 1) {
		t.Skip("the job finished before it could be killed: nothing was rescaled")
	}
	run := exec.Command(bin, append([]string{"run", "--parallelism", "2"}, base...)...)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("resuming at parallelism 2: %v\n%s", err, out)
	}
	evs, err := events.ReadFile(evFile)
	if err != nil {
		t.Fatal(err)
	}
	resumed := 0
	for _, e := range evs {
		if e.Kind == events.Resume {
			resumed++
		}
	}
	if resumed != 2 {
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, fmt.Sprint(e.Kind))
		}
		t.Fatalf("%d runs resumed from a checkpoint, want 2 (events: %s):\n%s", resumed, strings.Join(kinds, " "), out)
	}
	kafkatest.Compare(t, "rescaled run", want, kafkatest.Committed(t, brokers, "rescaled"))
}

// TestMain loads the example's package once and links its program once for
// all the tests (crashtest.Main): TestCrash and TestRescale build the same
// program.
func TestMain(m *testing.M) {
	crashtest.Main(m)
}
