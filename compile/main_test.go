package compile

import (
	"os"
	"testing"

	"github.com/pipegen/pipegen/dsl"
)

// TestMain keeps the loaded Go packages (dsl.CachePackages): the tests
// compile the same pipelines again and again (examples/runningcount's
// sixteen times), and each load runs go list. A test that rewrites a
// package's files gets it loaded again.
func TestMain(m *testing.M) {
	dsl.CachePackages()
	os.Exit(m.Run())
}
