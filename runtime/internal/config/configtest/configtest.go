// Package configtest holds the settings of a small pipeline for the tests
// of the packages that read settings.
package configtest

import (
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
)

// Demo is the compiled settings of a small pipeline:
//
//	lines (file source) -> words (flatmap, fused) -> counts (aggregate) -> out (file sink, fused)
//	gen (generator, parallelism 1) -> show (stdout sink)
func Demo() *config.Config {
	return &config.Config{
		Name:           "demo",
		Source:         "demo/pipeline.yaml",
		Parallelism:    2,
		MaxParallelism: 8,
		Checkpoint: config.CheckpointConfig{
			Mode:     config.ExactlyOnce,
			Interval: 10 * time.Second,
			Timeout:  10 * time.Minute,
			Retain:   3,
			Dir:      "checkpoints",
		},
		Restart:      config.RestartConfig{Strategy: "fixed-delay", Attempts: 3, Delay: time.Second, MaxDelay: time.Minute, Multiplier: 2, MaxFailures: 3, Interval: time.Minute},
		StateBackend: "memory",
		Nodes: []config.NodeConfig{
			{Name: "lines", UID: "lines", Kind: "source", Section: "sources", Connector: "file", Options: map[string]string{"path": "input.txt"}},
			{Name: "words", UID: "words", Kind: "flatmap", Section: "operators", FusedWith: "lines"},
			{Name: "counts", UID: "counts", Kind: "aggregate", Section: "operators"},
			{Name: "out", UID: "out", Kind: "sink", Section: "sinks", Connector: "file", FusedWith: "counts", Options: map[string]string{"path": "out"}},
			{Name: "gen", UID: "gen", Kind: "source", Section: "sources", Connector: "generator", Parallelism: 1, ParallelismSet: true, Options: map[string]string{"generate": "Gen"}},
			{Name: "show", UID: "show", Kind: "sink", Section: "sinks", Connector: "stdout"},
		},
	}
}
