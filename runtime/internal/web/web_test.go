package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/metrics"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestAddress(t *testing.T) {
	for _, c := range []struct {
		flag, addr string
		loopback   bool
	}{
		{"9090", "127.0.0.1:9090", true},
		{":9090", "127.0.0.1:9090", true},
		{"localhost:0", "localhost:0", true},
		{"127.0.0.2:80", "127.0.0.2:80", true},
		{"[::1]:80", "[::1]:80", true},
		{"0.0.0.0:9090", "0.0.0.0:9090", false},
		{"10.1.2.3:9090", "10.1.2.3:9090", false},
	} {
		addr, loopback, err := Address(c.flag)
		if err != nil || addr != c.addr || loopback != c.loopback {
			t.Errorf("Address(%q) = %q, %v, %v; want %q, %v", c.flag, addr, loopback, err, c.addr, c.loopback)
		}
	}
	if _, _, err := Address("nine"); err == nil {
		t.Errorf("Address(nine) is no error")
	}
}

func registry() *metrics.Registry {
	cfg := &config.Config{Name: "t", Parallelism: 1, MaxParallelism: 128, Nodes: []config.NodeConfig{
		{Name: "src", Kind: "source", Section: "sources", Connector: "generator"},
		{Name: "out", Kind: "sink", Section: "sinks", Connector: "stdout", FusedWith: "src", Inputs: []config.NodeInput{{From: "src", Partition: "forward"}}},
	}}
	cfg.Resolve()
	return metrics.New(cfg)
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestServer(t *testing.T) {
	r := registry()
	c := r.Meter(0, 0, 1)
	c.Publish([]uint64{42, 0, 0, 0})
	s, err := Listen("127.0.0.1:0", "tok", r)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "http://" + s.Addr()
	for _, p := range []string{"/", "/metrics", "/healthz", "/readyz", "/api/status"} {
		if code, _ := get(t, base+p, ""); code != 401 {
			t.Errorf("%s without the token: %d", p, code)
		}
	}
	code, body := get(t, base+"/metrics", "tok")
	if code != 200 || !strings.Contains(body, `pipegen_records_out_total{node="src",pipeline="t",subtask="0"} 42`) ||
		!strings.Contains(body, `pipegen_records_in_total{node="out",pipeline="t",subtask="0"} 42`) {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
	// A source's alignment drift shows once it is known.
	if strings.Contains(body, "pipegen_source_alignment_drift_milliseconds{") {
		t.Errorf("/metrics has a drift before any is known:\n%s", body)
	}
	r.Node(0, 0).Drift.Store(1500)
	if _, body := get(t, base+"/metrics", "tok"); !strings.Contains(body, `pipegen_source_alignment_drift_milliseconds{node="src",pipeline="t",subtask="0"} 1500`) {
		t.Errorf("/metrics without the drift set:\n%s", body)
	}
	if code, body := get(t, base+"/readyz", "tok"); code != 503 || !strings.Contains(body, "starting") {
		t.Errorf("/readyz of a job starting: %d %q", code, body)
	}
	r.SetState(metrics.Running)
	if code, _ := get(t, base+"/readyz", "tok"); code != 200 {
		t.Errorf("/readyz of a running job: %d", code)
	}
	if code, body := get(t, base+"/?token=tok", ""); code != 200 || !strings.Contains(body, "<svg") && !strings.Contains(body, "drawGraph") {
		t.Errorf("/: %d", code)
	}
	if code, _ := get(t, base+"/nothing", "tok"); code != 404 {
		t.Errorf("/nothing: %d", code)
	}
	r.SetState(metrics.Failed)
	if code, _ := get(t, base+"/healthz", "tok"); code != 503 {
		t.Errorf("/healthz of a failed job: %d", code)
	}
}

// A Kafka source's paused partitions show on /metrics once it aligns
// them (a source without timestamps.max-drift has none to show).
func TestMetricsPausedPartitions(t *testing.T) {
	cfg := &config.Config{Name: "t", Parallelism: 1, MaxParallelism: 128, Nodes: []config.NodeConfig{
		{Name: "in", Kind: "source", Section: "sources", Connector: "kafka"},
	}}
	cfg.Resolve()
	r := metrics.New(cfg)
	s, err := Listen("127.0.0.1:0", "tok", r)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const line = `pipegen_source_paused_partitions{node="in",pipeline="t",subtask="0"}`
	if _, body := get(t, "http://"+s.Addr()+"/metrics", "tok"); strings.Contains(body, line) {
		t.Errorf("/metrics has paused partitions of a source that does not align them:\n%s", body)
	}
	r.Node(0, 0).Paused.Store(2)
	if _, body := get(t, "http://"+s.Addr()+"/metrics", "tok"); !strings.Contains(body, line+" 2") {
		t.Errorf("/metrics without the 2 paused partitions:\n%s", body)
	}
}
