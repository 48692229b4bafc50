package compile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
		if missingRequirement(msg) {
			return requirementError(r.IR.ModuleDir, msg)
		}
		return fmt.Errorf("go build of the generated program failed: %v\n%s", err, msg)
	}
	return nil
}

// toolPath is the package a module names in its tool directive to have
// pipegen as a tool: `go tool pipegen` then runs the pipegen its go.mod
// requires, and go.mod and go.sum keep every module the generated
// programs need, since cmd/pipegen imports the runtime.
const toolPath = modulePath + "/cmd/pipegen"

// missingRequirement reports whether go build failed because the module's
// go.mod or go.sum lacks a module, as the go command says it with and
// without -mod=readonly.
func missingRequirement(msg string) bool {
	for _, s := range []string{"no required module provides package", "cannot find module providing package", "missing go.sum entry", "updates to go.mod needed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// requirementError says which command, run in the module's directory,
// gives the module what the generated program needs, going by what its
// go.mod holds: without a requirement of pipegen, go get -tool adds one
// (at the version of the pipegen that runs, whose generated code it
// matches); with one, the tool directive and go mod tidy add the rest.
func requirementError(dir, goMsg string) error {
	first, _, _ := strings.Cut(goMsg, "\n")
	var mod struct {
		Require []struct{ Path string }
		Tool    []struct{ Path string }
	}
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	if out, err := cmd.Output(); err != nil || json.Unmarshal(out, &mod) != nil {
		return fmt.Errorf("go build of the generated program failed: the module in %s lacks a requirement\n%s", dir, goMsg)
	}
	required := slices.ContainsFunc(mod.Require, func(m struct{ Path string }) bool { return m.Path == modulePath })
	tool := slices.ContainsFunc(mod.Tool, func(m struct{ Path string }) bool { return m.Path == toolPath })
	switch {
	case !required:
		version := Version()
		if !strings.HasPrefix(version, "v") {
			version = "latest"
		}
		return fmt.Errorf("the module in %s does not require %s, whose runtime the generated program imports: run `go get -tool %s@%s` in %s", dir, modulePath, toolPath, version, dir)
	case !tool:
		return fmt.Errorf("the module in %s requires %s but lacks modules the generated program needs (%s): run `go mod edit -tool=%s && go mod tidy` in %s; with pipegen as a tool, go mod tidy keeps them", dir, modulePath, first, toolPath, dir)
	}
	return fmt.Errorf("the module's go.mod or go.sum lacks modules the generated program needs (%s): run `go mod tidy` in %s", first, dir)
}
