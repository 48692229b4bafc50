package compile

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/internal/goldenfile"
)

// writeManifest writes a savepoint MANIFEST (with its checksum line, as
// the runtime writes it) into a new folder and returns the folder.
func writeManifest(t *testing.T, m map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	data = fmt.Appendf(data, "crc32c %08x\n", crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCheckSavepoint checks examples/runningcount's pipeline against
// savepoints of versions of it that differ in each way the restore rules
// look at: every incompatibility has a golden diagnostic, at the
// pipeline's node or at the field of the Go type.
func TestCheckSavepoint(t *testing.T) {
	const (
		pipeline = "../examples/runningcount/pipeline.yaml"
		key      = "string"
		value    = "github.com/pipegen/pipegen/examples/runningcount.Total{1 Count int64; 2 Sum int64}"
	)
	node := func(uid, kind, keySchema, valueSchema string) map[string]any {
		return map[string]any{"uid": uid, "name": uid, "kind": kind, "keySchema": keySchema, "valueSchema": valueSchema,
			"files": []map[string]any{{"subtask": 0, "name": uid + "-0.state"}}}
	}
	source := map[string]any{"uid": "events", "name": "events", "kind": "source", "connector": "generator", "sources": []map[string]any{{"subtask": 0}}}
	manifest := func(maxP int, nodes ...map[string]any) map[string]any {
		return map[string]any{"format": 2, "id": 7, "job": "runningcount", "savepoint": true, "maxParallelism": maxP, "nodes": append([]map[string]any{source}, nodes...)}
	}
	cases := []struct {
		name     string
		manifest map[string]any
		allow    bool
	}{
		{"compatible", manifest(128, node("totals", "aggregate", key, value)), false},
		{"field-added", manifest(128, node("totals", "aggregate", key, "github.com/pipegen/pipegen/examples/runningcount.Total{1 Count int64}")), false},
		{"field-type-changed", manifest(128, node("totals", "aggregate", key, "github.com/pipegen/pipegen/examples/runningcount.Total{1 Count uint64; 2 Sum int64}")), false},
		{"field-renamed", manifest(128, node("totals", "aggregate", key, "github.com/pipegen/pipegen/examples/runningcount.Total{1 N int64; 2 Sum int64}")), false},
		{"key-type-changed", manifest(128, node("totals", "aggregate", "int64", value)), false},
		{"kind-changed", manifest(128, node("totals", "reduce", key, value)), false},
		{"vanished-node", manifest(128, node("totals", "aggregate", key, value), node("gone", "aggregate", key, value)), false},
		{"vanished-node-allowed", manifest(128, node("totals", "aggregate", key, value), node("gone", "aggregate", key, value)), true},
		{"max-parallelism", manifest(64, node("totals", "aggregate", key, value)), false},
		// The same pipeline in its //pipegen: directive form.
		{"directives-field-type-changed", manifest(128, node("totals", "aggregate", key, "github.com/pipegen/pipegen/examples/runningcount.Total{1 Count uint64; 2 Sum int64}")), false},
		{"directives-vanished-node", manifest(128, node("totals", "aggregate", key, value), node("gone", "aggregate", key, value)), false},
		{"directives-key-type-changed", manifest(128, node("totals", "aggregate", "int64", value)), false},
		{"connector-changed", map[string]any{"format": 2, "id": 7, "job": "runningcount", "savepoint": true, "maxParallelism": 128, "nodes": []map[string]any{
			{"uid": "events", "name": "events", "kind": "source", "connector": "file", "sources": []map[string]any{{"subtask": 0}}}}}, false},
	}
	wd, _ := os.Getwd()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := writeManifest(t, tc.manifest)
			saved := Stderr
			var warnings strings.Builder
			Stderr = &warnings
			defer func() { Stderr = saved }()
			_, err := CheckSavepoint(pipeline, sp, tc.allow)
			if strings.HasPrefix(tc.name, "directives-") {
				_, err = CheckPackageSavepoint("../examples/runningcount", sp, tc.allow)
			}
			var got string
			switch l, ok := IsDiagnostics(err); {
			case ok:
				got = l.Format(wd)
			case err != nil:
				t.Fatal(err)
			default:
				got = warnings.String()
			}
			got = strings.ReplaceAll(got, sp, "SAVEPOINT")
			if got == "" {
				got = "(fine)\n"
			}
			goldenfile.Check(t, filepath.Join("testdata", "savepoint", tc.name+".txt"), []byte(got))
		})
	}
}

// TestCheckSavepointMapState checks examples/merchants (a process with a
// map state and a state-ttl) against savepoints whose map state's key or
// value type differs, or that have no state-ttl: each is refused, naming
// the node and the field.
func TestCheckSavepointMapState(t *testing.T) {
	const pkg = "github.com/pipegen/pipegen/examples/merchants."
	state := func(key, value string) string {
		return "ttl(" + pkg + "Card{1 Payments int; 2 Merchants mapstate[" + key + "]" + pkg + "Spend{" + value + "}})"
	}
	node := func(valueSchema string) map[string]any {
		return map[string]any{"format": 2, "id": 7, "job": "merchants", "savepoint": true, "maxParallelism": 128, "nodes": []map[string]any{
			{"uid": "payments", "name": "payments", "kind": "source", "connector": "generator", "sources": []map[string]any{{"subtask": 0}}},
			{"uid": "spend", "name": "spend", "kind": "process", "keySchema": "string", "valueSchema": valueSchema,
				"files": []map[string]any{{"subtask": 0, "name": "spend-0.state"}, {"subtask": 0, "state": "map.Merchants", "name": "spend-map.Merchants-0.state"}}}}}
	}
	cases := []struct{ name, schema string }{
		{"mapstate-compatible", state("string", "1 Count int; 2 Cents int64")},
		{"mapstate-value-field-added", state("string", "1 Count int")},
		{"mapstate-key-changed", state("int64", "1 Count int; 2 Cents int64")},
		{"mapstate-value-changed", state("string", "1 Count int; 2 Cents float64")},
		{"mapstate-no-ttl", strings.TrimSuffix(strings.TrimPrefix(state("string", "1 Count int; 2 Cents int64"), "ttl("), ")")},
	}
	wd, _ := os.Getwd()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := writeManifest(t, node(tc.schema))
			got := "(fine)\n"
			_, err := CheckSavepoint("../examples/merchants/pipeline.yaml", sp, false)
			if l, ok := IsDiagnostics(err); ok {
				got = l.Format(wd)
			} else if err != nil {
				t.Fatal(err)
			}
			goldenfile.Check(t, filepath.Join("testdata", "savepoint", tc.name+".txt"), []byte(strings.ReplaceAll(got, sp, "SAVEPOINT")))
		})
	}
}

// TestCheckSavepointBroadcast checks examples/fraud (a process whose
// rules input builds a broadcast state) against savepoints whose rules
// table had another type: a changed field type is refused at the node, a
// field added later reads as its zero value.
func TestCheckSavepointBroadcast(t *testing.T) {
	const (
		pkg   = "github.com/pipegen/pipegen/examples/fraud."
		value = pkg + "CardState{1 Pending []" + pkg + "Payment{1 Seq uint64; 2 Card string; 3 Category string; 4 Amount int64; 5 At time.Time}; 2 BlockedUntil int64}"
	)
	rules := func(fields string) string { return "map[string][]" + pkg + "Rule{" + fields + "}" }
	manifest := func(broadcast string) map[string]any {
		return map[string]any{"format": 2, "id": 7, "job": "fraud", "savepoint": true, "maxParallelism": 128, "nodes": []map[string]any{
			{"uid": "check", "name": "check", "kind": "process", "keySchema": "string", "valueSchema": value, "broadcastSchema": broadcast,
				"files": []map[string]any{{"subtask": 0, "name": "check-0.state"}, {"subtask": 0, "state": "broadcast", "name": "check-broadcast-0.state"}}}}}
	}
	cases := []struct{ name, schema string }{
		{"broadcast-compatible", rules("1 Seq uint64; 2 Category string; 3 Max int64; 4 BlockFor time.Duration; 5 From time.Time")},
		{"broadcast-field-added", rules("1 Seq uint64; 2 Category string; 3 Max int64; 4 BlockFor time.Duration")},
		{"broadcast-field-type-changed", rules("1 Seq uint64; 2 Category string; 3 Max float64; 4 BlockFor time.Duration; 5 From time.Time")},
		{"broadcast-key-changed", "map[int64][]" + pkg + "Rule{1 Seq uint64; 2 Category string; 3 Max int64; 4 BlockFor time.Duration; 5 From time.Time}"},
	}
	wd, _ := os.Getwd()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := writeManifest(t, manifest(tc.schema))
			got := "(fine)\n"
			_, err := CheckSavepoint("../examples/fraud/pipeline.yaml", sp, false)
			if l, ok := IsDiagnostics(err); ok {
				got = l.Format(wd)
			} else if err != nil {
				t.Fatal(err)
			}
			goldenfile.Check(t, filepath.Join("testdata", "savepoint", tc.name+".txt"), []byte(strings.ReplaceAll(got, sp, "SAVEPOINT")))
		})
	}
}
