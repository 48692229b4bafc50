package observe_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pipegen/pipegen/compile"
	"github.com/pipegen/pipegen/examples/observe"
	_ "github.com/pipegen/pipegen/internal/goldenfile" // defines -update
	"github.com/pipegen/pipegen/internal/syncbuf"
	"github.com/pipegen/pipegen/verify"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildDir  string
)

// program builds the job once for all tests.
func program(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the job")
	}
	buildOnce.Do(func() {
		res, err := compile.Generate("pipeline.yaml", compile.Options{})
		if err != nil {
			buildErr = err
			return
		}
		buildDir, buildErr = os.MkdirTemp("", "observe-test-")
		if buildErr != nil {
			return
		}
		v, err := verify.NewVerifier(res, buildDir)
		if err != nil {
			buildErr = err
			return
		}
		binary = v.Binary
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// job is a running process of the job.
type job struct {
	cmd    *exec.Cmd
	addr   string // host:port to connect to
	stderr *syncbuf.Buffer
	done   chan error
}

var statusLine = regexp.MustCompile(`status page at http://([^/\s]+)/`)

// start runs the job in a folder of its own, with env added to its
// environment, and waits for the address of its HTTP side.
func start(t *testing.T, env []string, args ...string) *job {
	t.Helper()
	bin := program(t)
	dir := t.TempDir()
	data, err := os.ReadFile("readings.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "readings.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	j := &job{stderr: &syncbuf.Buffer{}, done: make(chan error, 1)}
	j.cmd = exec.Command(bin, append([]string{"run"}, args...)...)
	j.cmd.Dir = dir
	j.cmd.Env = append(os.Environ(), env...)
	j.cmd.Stdout = io.Discard
	j.cmd.Stderr = j.stderr
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { j.done <- j.cmd.Wait() }()
	t.Cleanup(func() {
		j.cmd.Process.Kill()
		<-j.done
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := statusLine.FindStringSubmatch(j.stderr.String()); m != nil {
			host, port, _ := net.SplitHostPort(m[1])
			if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
				host = "127.0.0.1"
			}
			j.addr = net.JoinHostPort(host, port)
			return j
		}
		select {
		case err := <-j.done:
			t.Fatalf("the job ended (%v) before it served:\n%s", err, j.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no status page line within 30s:\n%s", j.stderr.String())
	return nil
}

// stop sends SIGTERM and waits for the job to stop at a checkpoint.
func (j *job) stop(t *testing.T) {
	t.Helper()
	j.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-j.done:
		j.done <- err
		if err != nil {
			t.Fatalf("after SIGTERM the job exited with %v:\n%s", err, j.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the job did not stop within 30s of SIGTERM:\n%s", j.stderr.String())
	}
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// scrape reads /metrics into a map from "name{labels}" (labels sorted, the
// pipeline's left out) to value.
func scrape(t *testing.T, addr, token string) map[string]float64 {
	t.Helper()
	code, body := get(t, "http://"+addr+"/metrics", token)
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad line %q", line)
		}
		key := strings.Replace(line[:i], `pipeline="observe"`, "", 1)
		key = strings.NewReplacer(",,", ",", "{,", "{", ",}", "}").Replace(key)
		m[key] = v
	}
	return m
}

// total sums a metric of a node over its subtasks.
func total(m map[string]float64, name, node string) float64 {
	sum := 0.0
	for k, v := range m {
		if strings.HasPrefix(k, name+"{") && strings.Contains(k, `node="`+node+`"`) {
			sum += v
		}
	}
	return sum
}

// TestMetrics scrapes /metrics of the running job, on an address beyond
// loopback and so with a token, and checks its counts against what the
// job was fed: every number, the even ones through the filter and the
// keyed reduce into the sink, the late numbers the window dropped, the
// malformed lines the file source skipped, and checkpoints.
func TestMetrics(t *testing.T) {
	bin := program(t)
	// Beyond loopback without a token the program refuses to start.
	out, err := exec.Command(bin, "run", "--http", "0.0.0.0:0").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "listens beyond this machine: give a token") {
		t.Fatalf("--http 0.0.0.0:0 without a token: %v\n%s", err, out)
	}

	const token = "s3cret-token"
	j := start(t, []string{"PIPEGEN_HTTP_TOKEN=" + token}, "--http", "0.0.0.0:0")
	for _, path := range []string{"/metrics", "/", "/api/status", "/healthz", "/readyz"} {
		if code, _ := get(t, "http://"+j.addr+path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", path, code)
		}
		if code, _ := get(t, "http://"+j.addr+path, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d, want 401", path, code)
		}
	}
	if code, _ := get(t, "http://"+j.addr+"/metrics?token="+token, ""); code != 200 {
		t.Errorf("/metrics?token=TOKEN: %d, want 200", code)
	}
	// The same through an address of this machine that is not loopback,
	// when it has one.
	if ip := outsideIP(); ip != "" {
		_, port, _ := net.SplitHostPort(j.addr)
		if code, _ := get(t, "http://"+net.JoinHostPort(ip, port)+"/metrics", ""); code != http.StatusUnauthorized {
			t.Errorf("/metrics on %s without the token: %d, want 401", ip, code)
		}
	}

	// Independently: the late numbers and marks (each an hour behind its
	// source's watermark), and the pairs of the others, a mark within
	// 10ms of a number of the same digit.
	late, lateMarks, pairs := 0, 0, 0
	for seq := range uint64(observe.Numbers) {
		if observe.Late(seq) {
			late++
		}
	}
	for k := range uint64(observe.Marks) {
		if observe.Late(k) {
			lateMarks++
			continue
		}
		for j := int64(20*k) - 10; j <= int64(20*k)+10; j++ {
			if j >= 0 && j < observe.Numbers && !observe.Late(uint64(j)) && uint64(j)%10 == k%10 {
				pairs++
			}
		}
	}
	var m map[string]float64
	deadline := time.Now().Add(60 * time.Second)
	for {
		m = scrape(t, j.addr, token)
		if total(m, "pipegen_records_in_total", "out") == observe.Numbers/2 && total(m, "pipegen_records_in_total", "counts") > 0 &&
			total(m, "pipegen_records_in_total", "paired") == float64(pairs) &&
			m["pipegen_checkpoints_completed_total{}"] >= 2 && total(m, "pipegen_records_in_total", "good") == 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the counts did not reach what the job was fed within 60s:\n%v\n%s", m, j.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	want := []struct {
		name, node string
		value      float64
	}{
		{"pipegen_records_out_total", "nums", observe.Numbers},
		{"pipegen_records_in_total", "evens", observe.Numbers},
		{"pipegen_records_out_total", "evens", observe.Numbers / 2},
		{"pipegen_records_in_total", "sums", observe.Numbers / 2},
		{"pipegen_records_out_total", "sums", observe.Numbers / 2}, // a reduce emits on every record
		{"pipegen_records_in_total", "out", observe.Numbers / 2},
		{"pipegen_records_in_total", "per-second", observe.Numbers},
		{"pipegen_records_late_total", "per-second", float64(late)},
		{"pipegen_records_dropped_total", "per-second", float64(late)},
		{"pipegen_records_out_total", "readings", 7},
		{"pipegen_records_malformed_total", "readings", 3},
		{"pipegen_records_dropped_total", "readings", 3},
		{"pipegen_source_lag_bytes", "readings", 0},
		{"pipegen_records_in_total", "good", 7},
		{"pipegen_records_out_total", "marks", observe.Marks},
		{"pipegen_records_in_total", "pairs", observe.Numbers + observe.Marks},
		{"pipegen_records_late_total", "pairs", float64(late + lateMarks)},
		{"pipegen_records_dropped_total", "pairs", float64(late + lateMarks)},
		{"pipegen_records_out_total", "pairs", float64(pairs)},
	}
	for _, w := range want {
		if got := total(m, w.name, w.node); got != w.value {
			t.Errorf("%s of %s: %v, want %v", w.name, w.node, got, w.value)
		}
	}
	fi, _ := os.Stat("readings.jsonl")
	if got := total(m, "pipegen_bytes_in_total", "readings"); got != float64(fi.Size()) {
		t.Errorf("bytes read by readings: %v, want the file's %d", got, fi.Size())
	}
	if got := total(m, "pipegen_bytes_out_total", "out"); got <= 0 {
		t.Errorf("bytes written by out: %v", got)
	}
	// The window counted everything that was not late.
	if got, windows := total(m, "pipegen_records_out_total", "per-second"), total(m, "pipegen_records_in_total", "counts"); got != windows || got < 20 {
		t.Errorf("per-second emitted %v windows, its sink took %v", got, windows)
	}
	if _, ok := m[`pipegen_watermark_milliseconds{node="per-second",subtask="0"}`]; !ok {
		t.Errorf("no watermark of per-second")
	}
	if m[`pipegen_job_state{state="running"}`] != 1 || m[`pipegen_checkpoint_duration_seconds_count{}`] < 2 {
		t.Errorf("job state and checkpoint histogram: running %v, durations %v", m[`pipegen_job_state{state="running"}`], m[`pipegen_checkpoint_duration_seconds_count{}`])
	}
	if total(m, "pipegen_busy_seconds_total", "sums")+total(m, "pipegen_idle_seconds_total", "sums") <= 0 {
		t.Errorf("no time accounted for sums")
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, "http://"+j.addr+path, token); code != 200 {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	var st struct {
		State string `json:"state"`
		Nodes []struct {
			Name   string `json:"name"`
			Inputs []struct {
				From string `json:"from"`
			} `json:"inputs"`
		} `json:"nodes"`
	}
	if code, body := get(t, "http://"+j.addr+"/api/status", token); code != 200 || json.Unmarshal([]byte(body), &st) != nil || len(st.Nodes) != 13 || st.State != "running" {
		t.Errorf("/api/status: %d, %d nodes, state %q", code, len(st.Nodes), st.State)
	}

	j.stop(t)
	log := j.stderr.String()
	for _, line := range []string{
		fmt.Sprintf("observe: operators.per-second: dropped %d records too late for their window", late),
		"observe: sources.readings: skipped 3 malformed records (on-error: skip)",
		fmt.Sprintf("observe: operators.pairs: dropped %d records too late to be joined", late+lateMarks),
	} {
		if !strings.Contains(log, line) {
			t.Errorf("the summary lacks %q:\n%s", line, log)
		}
	}
}

// outsideIP is an address of this machine that is not loopback, "" when
// it has none.
func outsideIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// TestJSONLogs checks --log-format json: one object a line, each with the
// job, and a subtask's line with its node and subtask.
func TestJSONLogs(t *testing.T) {
	j := start(t, nil, "--http", "127.0.0.1:0", "--log-format", "json")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(j.stderr.String(), "checkpoint 2 done") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	j.stop(t)
	var sawSubtask, sawCheckpoint bool
	for _, line := range strings.Split(strings.TrimSpace(j.stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		if rec["job"] != "observe" || rec["msg"] == nil || rec["level"] == nil {
			t.Errorf("line without job, message or level: %q", line)
		}
		msg, _ := rec["msg"].(string)
		if strings.HasPrefix(msg, "sources.readings[0]: skipped 3 malformed records") {
			sawSubtask = rec["node"] == "readings" && rec["subtask"] == 0.0
		}
		sawCheckpoint = sawCheckpoint || strings.HasPrefix(msg, "checkpoint 2 done")
	}
	if !sawSubtask || !sawCheckpoint {
		t.Errorf("want the skipped line with node and subtask (%v) and a checkpoint line (%v):\n%s", sawSubtask, sawCheckpoint, j.stderr.String())
	}
}
