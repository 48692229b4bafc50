package kafka

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

func sourceEnv(t *testing.T, brokers string, p int, opts map[string]string) *connectortest.Env {
	o := map[string]string{"brokers": brokers, "topic": "in", "bounded": "latest"}
	for k, v := range opts {
		o[k] = v
	}
	return connectortest.New(t, p, connectortest.SourceNode("in", "kafka", o))
}

// A bounded source reads what the topic held when it started, every
// record once, and a restore at another parallelism shares the
// partitions out with their offsets: the two runs together read every
// record exactly once.
func TestSourceBoundedRescale(t *testing.T) {
	brokers := cluster(t, 4, "in")
	var want []string
	for p := range int32(4) {
		var vs []string
		for i := range 10 {
			vs = append(vs, fmt.Sprintf("%d-%d", p, i))
		}
		produce(t, brokers, "in", p, vs...)
		want = append(want, vs...)
	}
	e := sourceEnv(t, brokers, 2, nil)
	var got []string
	var states []storage.SourceState
	for sub := range 2 {
		s := NewSource(e, 0, sub, format.LinesFormat())
		for len(got) < 7*(sub+1) {
			if r, ok := s.Next(); ok {
				got = append(got, r)
			}
		}
		states = append(states, storage.SourceState{Subtask: sub, Position: encodePosition(s.positions())})
	}
	// Written after the start: a bounded source does not read it.
	produce(t, brokers, "in", 0, "late")
	e.Cancel(errors.New("stop"))

	e2 := sourceEnv(t, brokers, 3, nil)
	e2.Restore(t, &storage.Manifest{ID: 1, Job: "test", MaxParallelism: 128,
		Nodes: []storage.NodeState{{UID: "in", Name: "in", Kind: "source", Parallelism: 2, Connector: "kafka", Sources: states}}})
	for sub := range 3 {
		s := NewSource(e2, 0, sub, format.LinesFormat())
		got = append(got, connectortest.ReadAll(s)...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read %d records %q,\nwant %d %q", len(got), got, len(want), want)
	}
}
