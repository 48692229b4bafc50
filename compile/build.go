package compile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// overlayDir is where the generated main package appears inside the user's
// module while it is built. It exists only in the go command's overlay:
// nothing is written into the user's tree.
const overlayDir = "pipegen_build"

// Build compiles the generated program into the binary out, inside the
// user's module so that its go.mod decides every dependency's version, as
// for any program of the module.
func (r *Result) Build(out string) error {
	if r.IR.ModuleDir == "" {
		return fmt.Errorf("the pipeline's package is not in a Go module: run `go mod init` in its directory first")
	}
	tmp, err := os.MkdirTemp("", "pipegen-build-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	pkgDir := filepath.Join(r.IR.ModuleDir, overlayDir, r.IR.Name)
	overlay := struct{ Replace map[string]string }{Replace: map[string]string{}}
	for _, f := range r.Files {
		src := filepath.Join(tmp, f.Name)
		if err := os.WriteFile(src, f.Content, 0o644); err != nil {
			return err
		}
		overlay.Replace[filepath.Join(pkgDir, f.Name)] = src
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	data, err := json.Marshal(overlay)
	if err != nil {
		return err
	}
	if err := os.WriteFile(overlayFile, data, 0o644); err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-overlay", overlayFile, "-o", absOut, "./"+overlayDir+"/"+r.IR.Name)
	cmd.Dir = r.IR.ModuleDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "github.com/pipegen/pipegen/runtime") && strings.Contains(msg, "no required module") {
			return fmt.Errorf("go build: the module in %s does not require pipegen's runtime: run `go get github.com/pipegen/pipegen` there (or add a replace directive to a local copy)\n%s", r.IR.ModuleDir, msg)
		}
		return fmt.Errorf("go build of the generated program failed: %v\n%s", err, msg)
	}
	return nil
}
