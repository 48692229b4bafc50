package dsl

import (
	"os"
	"testing"
)

// TestMain keeps the loaded Go packages (CachePackages): the tests load
// the same fixtures again and again (testdata/partition eight times), and
// a load runs go list. A test that rewrites a package's files gets it
// loaded again (folderStamp).
func TestMain(m *testing.M) {
	CachePackages()
	os.Exit(m.Run())
}
