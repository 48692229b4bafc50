package compile

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultProfile is the CPU profile that a profile-guided build takes by
// default: default.pgo beside the pipeline file, as the go command takes
// default.pgo beside a main package.
const DefaultProfile = "default.pgo"

// PGOFlags are the go command's flags for a profile-guided build of the
// program of pipelineFile (go help build, -pgo): pgo names a CPU profile
// (a program's run --cpuprofile), or is "auto" (or "") for DefaultProfile
// beside the pipeline file when there is one, or "off". The go command
// itself would look for default.pgo beside the generated main package,
// which exists only in its overlay, so a pipeline's profile is found here.
func PGOFlags(pipelineFile, pgo string) ([]string, error) {
	auto := pgo == "" || pgo == "auto"
	switch {
	case pgo == "off":
		return nil, nil
	case auto:
		pgo = filepath.Join(filepath.Dir(pipelineFile), DefaultProfile)
	}
	abs, err := filepath.Abs(pgo)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil && auto:
		return nil, nil // no profile beside the pipeline: a build without one
	case err != nil:
		return nil, fmt.Errorf("the CPU profile for a profile-guided build: %v (make one with the program's run --cpuprofile FILE, or give -pgo=off)", err)
	case fi.IsDir():
		return nil, fmt.Errorf("the CPU profile for a profile-guided build: %s is a directory, not a profile (make one with the program's run --cpuprofile FILE)", pgo)
	}
	return []string{"-pgo=" + abs}, nil
}
