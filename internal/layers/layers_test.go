package layers

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

const module = "github.com/pipegen/pipegen/"

// allowed lists, for each package of the module, the packages of the
// module it may import (tests aside). A package not listed may import
// nothing of the module's runtime but what "compiler" allows.
var allowed = map[string][]string{
	// Leaves.
	"runtime/version":           nil,
	"runtime/codec":             nil,
	"runtime/textcodec":         nil,
	"runtime/vfs":               nil,
	"runtime/settings":          nil,
	"runtime/events":            nil,
	"runtime/internal/fault":    nil,
	"runtime/internal/keygroup": nil,
	"runtime/internal/intkey":   nil,
	"runtime/internal/pages":    nil,
	// The self-checks' switch (the build tag invariants).
	"runtime/internal/invariants": nil,
	"runtime/schema":              nil,
	"runtime/internal/logs":       nil,
	"runtime/internal/control":    nil,
	// The counters of a job, and its HTTP side that reads them.
	"runtime/internal/metrics": {"runtime/events", "runtime/internal/config"},
	"runtime/internal/web":     {"runtime/internal/config", "runtime/internal/metrics"},
	"runtime/state":            {"runtime/codec", "runtime/internal/intkey", "runtime/internal/invariants", "runtime/internal/pages"},
	"runtime/internal/config":  {"runtime/settings"},
	// The data plane and the event-time engines.
	"runtime/internal/stream":    {"runtime/internal/fault", "runtime/internal/invariants", "runtime/internal/keygroup"},
	"runtime/internal/eventtime": {"", "runtime/codec", "runtime/state", "runtime/internal/config", "runtime/internal/fault", "runtime/internal/intkey", "runtime/internal/invariants", "runtime/internal/pages", "runtime/internal/stream"},
	// Checkpoints: the storage format below the protocol.
	"runtime/internal/storage": {"runtime/codec", "runtime/vfs"},
	"runtime/internal/checkpoint": {"runtime/codec", "runtime/state", "runtime/vfs", "runtime/events", "runtime/internal/config",
		"runtime/internal/fault", "runtime/internal/keygroup", "runtime/schema", "runtime/internal/storage"},
	// Connectors see the checkpoint protocol, never the job.
	"runtime/internal/connector":        {"runtime/vfs", "runtime/internal/checkpoint", "runtime/internal/config", "runtime/internal/metrics", "runtime/internal/storage"},
	"runtime/internal/connector/format": {"runtime/internal/config", "runtime/internal/fault", "runtime/textcodec"},
	"runtime/internal/connector/file": {"runtime/codec", "runtime/vfs", "runtime/internal/checkpoint", "runtime/internal/config",
		"runtime/internal/connector", "runtime/internal/connector/format", "runtime/internal/fault", "runtime/internal/metrics", "runtime/internal/storage"},
	"runtime/internal/connector/generator": {"runtime/codec", "runtime/internal/checkpoint", "runtime/internal/connector", "runtime/internal/fault", "runtime/internal/metrics", "runtime/internal/storage"},
	"runtime/internal/connector/kafka": {"runtime/codec", "runtime/vfs", "runtime/internal/checkpoint", "runtime/internal/config",
		"runtime/internal/connector", "runtime/internal/connector/format", "runtime/internal/fault", "runtime/internal/metrics", "runtime/internal/storage"},
	"runtime/internal/connector/stdout": {"runtime/internal/checkpoint", "runtime/internal/connector", "runtime/internal/connector/format", "runtime/internal/fault", "runtime/internal/metrics"},
	// The Kafka connector's facade, beside the runtime's: only programs
	// with a Kafka source or sink link it.
	"runtime/kafka": {"runtime", "runtime/internal/connector/format", "runtime/internal/connector/kafka"},
	// The pebble state backend, which only generated code of pipelines
	// that use it imports (beside the facade).
	"runtime/pebblestate": {"", "runtime/codec", "runtime/state", "runtime/vfs", "runtime/internal/checkpoint",
		"runtime/internal/eventtime", "runtime/internal/fault", "runtime/internal/invariants", "runtime/internal/keygroup",
		"runtime/internal/storage", "runtime/pebblestate/internal/kv"},
	// The Pebble store as pebblestate's generic types see it: a leaf.
	"runtime/pebblestate/internal/kv": nil,
	// Supervision, then the command line, then the facade.
	"runtime/internal/job": {"runtime/vfs", "runtime/events", "runtime/internal/checkpoint", "runtime/internal/config",
		"runtime/internal/connector", "runtime/internal/fault", "runtime/internal/logs", "runtime/internal/metrics", "runtime/internal/storage", "runtime/internal/stream"},
	"runtime/internal/drive": {"runtime/codec", "runtime/vfs", "runtime/internal/checkpoint", "runtime/internal/config", "runtime/internal/eventtime",
		"runtime/internal/fault", "runtime/internal/job", "runtime/internal/storage", "runtime/internal/stream"},
	"runtime/internal/cli": {"runtime/vfs", "runtime/events", "runtime/settings", "runtime/internal/config", "runtime/internal/fault",
		"runtime/internal/job", "runtime/internal/logs", "runtime/internal/metrics", "runtime/internal/storage", "runtime/internal/web",
		"runtime/internal/control", "runtime/codec", "runtime/schema"},
}

// compiler is what the compiler's packages may import of the runtime:
// the settings table, the contract version, and (verify) the events.
var compiler = []string{"runtime/settings", "runtime/version", "runtime/events", "runtime/schema"}

// toolImports are the runtime packages cmd/pipegen imports, blank, only
// so that a module with pipegen as a tool requires what generated code
// imports (see cmd/pipegen/runtime.go).
var toolImports = []string{"runtime", "runtime/codec", "runtime/kafka", "runtime/pebblestate", "runtime/state", "runtime/textcodec"}

func TestLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "golden" || strings.HasPrefix(rel, "golden/") || strings.HasPrefix(rel, "examples/"):
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files
		}
		check(t, rel, pkg.Imports)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, pkg string, imports []string) {
	rules, listed := allowed[pkg]
	for _, imp := range imports {
		if imp+"/" == module {
			imp = module // the root package, pipegen's user-facing types
		}
		dep, ok := strings.CutPrefix(imp, module)
		if !ok {
			continue
		}
		switch {
		case pkg == "runtime", strings.HasPrefix(pkg, "runtime/") && strings.HasSuffix(pkg, "test"):
			// The facade stands in front of everything; test helpers
			// (configtest, connectortest) serve the tests of the layers.
		case listed:
			if !slices.Contains(rules, dep) {
				t.Errorf("%s imports %s: not in its layer's table (internal/layers)", pkg, imp)
			}
		case pkg == "cmd/pipegen" && slices.Contains(toolImports, dep):
		case strings.HasPrefix(dep, "runtime"):
			if !slices.Contains(compiler, dep) {
				t.Errorf("%s imports %s: the compiler imports only %v of the runtime", pkg, imp, compiler)
			}
		}
	}
}
