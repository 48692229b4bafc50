package checkpoint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// TestCheckStateBroadcast: a checkpoint's broadcast state is compared
// with the one this version reads, like the node's keyed state: a field
// added reads as its zero value, a changed field type is refused before
// anything is decoded, naming the node and the field.
func TestCheckStateBroadcast(t *testing.T) {
	const rules = "map[string][]example.com/fraud.Rule{1 Category string; 2 Max int64}"
	c := &Checkpointer{cfg: &config.Config{Nodes: []config.NodeConfig{{Name: "check", UID: "check", Kind: "process",
		KeySchema: "string", ValueSchema: "int64", BroadcastSchema: rules}}}}
	manifest := func(broadcast string) *storage.Manifest {
		return &storage.Manifest{ID: 4, Nodes: []storage.NodeState{{UID: "check", Name: "check", Kind: "process",
			KeySchema: "string", ValueSchema: "int64", BroadcastSchema: broadcast,
			Files: []storage.StateFile{{Name: "check-0.state"}, {State: "broadcast", Name: "check-broadcast-0.state"}}}}}
	}
	for _, ok := range []string{rules, "map[string][]example.com/fraud.Rule{1 Category string}", ""} {
		if err := c.checkState(manifest(ok)); err != nil {
			t.Errorf("broadcast schema %q: %v", ok, err)
		}
	}
	err := c.checkState(manifest("map[string][]example.com/fraud.Rule{1 Category string; 2 Max float64}"))
	want := `the broadcast state of "check" (uid check) in checkpoint 4 cannot be read by this version: fraud.Rule.Max was float64 in the checkpoint and is int64 now`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("checkState = %v, want %q", err, want)
	}
}

// TestStateStemDistinct: the files of a node's other states (timers,
// broadcast, a map state) never share a name with those of another node
// whose uid spells the same, as "a" with its timers and a node "a-timers"
// once did; every uid the settings allow is accepted as it is.
func TestStateStemDistinct(t *testing.T) {
	uids := []string{"a", "a-timers", "a-broadcast", "a-map.F", "a.map.F", "a-1", "a_timers"}
	states := []string{"", "timers", "broadcast", "map.F"}
	seen := map[string]string{}
	for _, uid := range uids {
		for _, st := range states {
			stem := StateStem(uid, st)
			if other, dup := seen[stem]; dup {
				t.Errorf("StateStem(%q, %q) = %q, the same as %s", uid, st, stem, other)
			}
			seen[stem] = fmt.Sprintf("StateStem(%q, %q)", uid, st)
		}
	}
}
