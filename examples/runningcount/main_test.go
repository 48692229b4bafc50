package runningcount_test

import (
	"testing"

	"github.com/pipegen/pipegen/internal/crashtest"
)

// TestMain loads the package once and links each version of the job once
// (crashtest.Main): TestCrash's run on the memory backend, TestSavepoints
// and TestSIGTERM build the same program, each into a folder of its own.
// TestUpgrade writes its two versions into one folder of a module of its
// own, each before its build: the second write changes the folder's
// files, so its package is loaded again, and its generated files differ
// from the first's, so it is built again.
func TestMain(m *testing.M) {
	crashtest.Main(m)
}
