package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pipegen/pipegen/compile"
)

// checkPackage is `pipegen check` without a pipeline file: the //pipegen:
// directives of the package in dir.
func checkPackage(dir string, stdout io.Writer) error {
	ps, err := compile.CheckPackage(dir)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		return fmt.Errorf("the package in %s has no //pipegen:pipeline directive: nothing to check (see docs/annotations.md)", dir)
	}
	for _, p := range ps {
		fmt.Fprintf(stdout, "%s: pipeline %s is fine: %d nodes\n", dir, p.Name, len(p.Nodes))
		printFused(stdout, p)
	}
	return nil
}

// generatePackage is `pipegen generate` without a pipeline file.
func generatePackage(dir string, opts compile.PackageOptions, dump, check bool, stdout io.Writer) error {
	pk, err := compile.GeneratePackage(dir, opts)
	if err != nil {
		return err
	}
	if dump {
		for _, r := range pk.Pipelines {
			b, err := compile.DumpIR(r.IR)
			if err != nil {
				return err
			}
			if _, err := stdout.Write(b); err != nil {
				return err
			}
		}
		return nil
	}
	if check {
		changes, err := pk.Plan()
		if err != nil {
			return err
		}
		return staleError(dir, changes)
	}
	changes, err := pk.Commit()
	for _, c := range changes {
		verb := "wrote"
		if c.Kind == compile.Remove {
			verb = "removed"
		}
		fmt.Fprintf(stdout, "%s %s\n", verb, filepath.Join(dir, filepath.FromSlash(c.Path)))
	}
	return err
}

// staleError lists the generated files that are not up to date, or
// returns nil when there are none.
func staleError(dir string, changes []compile.Change) error {
	if len(changes) == 0 {
		return nil
	}
	var b strings.Builder
	files := "files are"
	if len(changes) == 1 {
		files = "file is"
	}
	fmt.Fprintf(&b, "%d generated %s not up to date: run pipegen generate (go generate) and commit the result", len(changes), files)
	for _, c := range changes {
		fmt.Fprintf(&b, "\n\t%s: %s", filepath.Join(dir, filepath.FromSlash(c.Path)), c.Kind)
	}
	return fmt.Errorf("%s", b.String())
}
