package runningcount_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/pipegen/pipegen/compile"
)

// TestMain links each version of the job once (compile.ReuseBuilds):
// TestCrash's run on the memory backend, TestSavepoints and TestSIGTERM
// build the same program, each into a folder of its own. TestUpgrade
// writes its two versions before it builds them, into a module of its
// own, and builds each once.
func TestMain(m *testing.M) {
	stop, err := compile.ReuseBuilds()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}
