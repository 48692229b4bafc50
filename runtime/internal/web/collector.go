package web

import (
	"math"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pipegen/pipegen/runtime/internal/metrics"
)

// collector reads a job's counters when Prometheus scrapes: nothing is
// computed between scrapes.
type collector struct {
	r    *metrics.Registry
	desc map[string]*prometheus.Desc
}

// metric is one of the job's metrics: its name, help, and labels beyond
// the pipeline's.
type metric struct {
	name, help string
	labels     []string
}

var nodeLabels = []string{"node", "subtask"}

var jobMetrics = []metric{
	{"pipegen_records_in_total", "Records a node received (a fused node: what its input emitted to it).", nodeLabels},
	{"pipegen_records_out_total", "Records a node emitted on its main output (a source: records read).", nodeLabels},
	{"pipegen_bytes_in_total", "Bytes a file source read.", nodeLabels},
	{"pipegen_bytes_out_total", "Bytes a sink wrote.", nodeLabels},
	{"pipegen_records_late_total", "Records too late for an event-time window or a join.", nodeLabels},
	{"pipegen_records_dropped_total", "Records a node dropped: late ones nothing reads, malformed ones a source skipped.", append(nodeLabels[:2:2], "reason")},
	{"pipegen_records_malformed_total", "Malformed records of a file source (skipped or sent to its dead letters).", nodeLabels},
	{"pipegen_source_lag_bytes", "Input a file source has not read yet, in bytes.", nodeLabels},
	{"pipegen_source_lag_records", "Offsets of a Kafka source's partitions not read yet, as of its latest fetch of each.", nodeLabels},
	{"pipegen_source_paused_partitions", "Partitions of a Kafka source subtask that wait, ahead of the source's slowest by more than timestamps.max-drift.", nodeLabels},
	{"pipegen_source_alignment_drift_milliseconds", "How far a source subtask's watermark is ahead of the slowest other subtask of its alignment group (timestamps.max-drift); 0 when none holds it back.", nodeLabels},
	{"pipegen_watermark_milliseconds", "Event time of a node (its chain's watermark), in Unix milliseconds.", nodeLabels},
	{"pipegen_busy_seconds_total", "Time a chain subtask (named by its head) spent working.", nodeLabels},
	{"pipegen_backpressured_seconds_total", "Time a chain subtask waited for room downstream (backpressure, barrier alignment).", nodeLabels},
	{"pipegen_idle_seconds_total", "Time a chain subtask waited for input.", nodeLabels},
	{"pipegen_inbox_fill_ratio", "How full a chain subtask's inbox is, from 0 to 1.", nodeLabels},
	{"pipegen_job_state", "1 for the state the job is in (starting, running, restarting, finished, stopped, failed).", []string{"state"}},
	{"pipegen_restarts_total", "Restarts of the job after a failure.", nil},
	{"pipegen_checkpoints_completed_total", "Checkpoints completed.", nil},
	{"pipegen_checkpoints_failed_total", "Checkpoints given up (failed or expired).", nil},
	{"pipegen_last_checkpoint_id", "Id of the newest completed checkpoint.", nil},
	{"pipegen_last_checkpoint_duration_seconds", "Duration of the newest completed checkpoint, from trigger to manifest.", nil},
	{"pipegen_last_checkpoint_alignment_seconds", "Longest barrier alignment of the newest completed checkpoint.", nil},
	{"pipegen_last_checkpoint_bytes", "Bytes the newest completed checkpoint wrote.", nil},
}

// newRegistry makes the Prometheus registry of a job: its own metrics,
// histograms of its checkpoints, and the Go and process collectors.
func newRegistry(r *metrics.Registry) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	pipeline := prometheus.Labels{"pipeline": r.Config.Name}
	c := &collector{r: r, desc: map[string]*prometheus.Desc{}}
	for _, m := range jobMetrics {
		c.desc[m.name] = prometheus.NewDesc(m.name, m.help, m.labels, pipeline)
	}
	duration := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pipegen_checkpoint_duration_seconds", Help: "Duration of completed checkpoints, from trigger to manifest.",
		ConstLabels: pipeline, Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)})
	alignment := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pipegen_checkpoint_alignment_seconds", Help: "Longest barrier alignment of completed checkpoints.",
		ConstLabels: pipeline, Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)})
	size := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pipegen_checkpoint_bytes", Help: "Bytes written by completed checkpoints.",
		ConstLabels: pipeline, Buckets: prometheus.ExponentialBuckets(1024, 4, 10)})
	r.OnCheckpoint(func(ck metrics.Checkpoint) {
		if ck.Failed != "" {
			return
		}
		duration.Observe(ck.Duration.Seconds())
		alignment.Observe(ck.Alignment.Seconds())
		size.Observe(float64(ck.Bytes))
	})
	reg.MustRegister(c, duration, alignment, size, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.desc {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	r := c.r
	emit := func(name string, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.desc[name], t, v, labels...)
	}
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	for id := range r.Config.Nodes {
		n := &r.Config.Nodes[id]
		head := r.Head(id)
		why := r.Dropped(id)
		for sub := range r.Subtasks(id) {
			s := strconv.Itoa(sub)
			f := r.Figures(id, sub)
			if n.Kind != "source" {
				emit("pipegen_records_in_total", counter, float64(f.In), n.Name, s)
			}
			if n.Kind != "sink" {
				emit("pipegen_records_out_total", counter, float64(f.Out), n.Name, s)
			}
			switch {
			case n.Kind == "source" && n.Connector == "file":
				emit("pipegen_bytes_in_total", counter, float64(f.BytesIn), n.Name, s)
				emit("pipegen_records_malformed_total", counter, float64(f.Malformed), n.Name, s)
				if f.Lag >= 0 {
					emit("pipegen_source_lag_bytes", gauge, float64(f.Lag), n.Name, s)
				}
			case n.Kind == "source" && n.Connector == "kafka":
				if f.Lag >= 0 {
					emit("pipegen_source_lag_records", gauge, float64(f.Lag), n.Name, s)
				}
				if f.Paused >= 0 {
					emit("pipegen_source_paused_partitions", gauge, float64(f.Paused), n.Name, s)
				}
			case n.Kind == "sink":
				emit("pipegen_bytes_out_total", counter, float64(f.BytesOut), n.Name, s)
			case n.JudgesLate():
				emit("pipegen_records_late_total", counter, float64(f.Late), n.Name, s)
			}
			if n.Kind == "source" && f.Drift != math.MinInt64 {
				emit("pipegen_source_alignment_drift_milliseconds", gauge, float64(f.Drift), n.Name, s)
			}
			if why != "" {
				emit("pipegen_records_dropped_total", counter, float64(f.Dropped), n.Name, s, why)
			}
			if w, ok := r.Chain(head, sub).WatermarkMillis(); ok {
				emit("pipegen_watermark_milliseconds", gauge, float64(w), n.Name, s)
			}
			if head != id {
				continue
			}
			t := r.Chain(id, sub).Times()
			emit("pipegen_busy_seconds_total", counter, t.Busy, n.Name, s)
			emit("pipegen_backpressured_seconds_total", counter, t.Backpressured, n.Name, s)
			emit("pipegen_idle_seconds_total", counter, t.Idle, n.Name, s)
			if t.Fill >= 0 {
				emit("pipegen_inbox_fill_ratio", gauge, t.Fill, n.Name, s)
			}
		}
	}
	sum := r.Summary()
	for _, st := range []string{metrics.Starting, metrics.Running, metrics.Restarting, metrics.Finished, metrics.Stopped, metrics.Failed} {
		v := 0.0
		if st == sum.State {
			v = 1
		}
		emit("pipegen_job_state", gauge, v, st)
	}
	emit("pipegen_restarts_total", counter, float64(sum.Restarts))
	emit("pipegen_checkpoints_completed_total", counter, float64(sum.Completed))
	emit("pipegen_checkpoints_failed_total", counter, float64(sum.Failed))
	for i := len(sum.Checkpoints) - 1; i >= 0; i-- {
		ck := sum.Checkpoints[i]
		if ck.Failed != "" {
			continue
		}
		emit("pipegen_last_checkpoint_id", gauge, float64(ck.ID))
		emit("pipegen_last_checkpoint_duration_seconds", gauge, ck.Duration.Seconds())
		emit("pipegen_last_checkpoint_alignment_seconds", gauge, ck.Alignment.Seconds())
		emit("pipegen_last_checkpoint_bytes", gauge, float64(ck.Bytes))
		break
	}
}
