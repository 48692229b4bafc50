package main

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestStamp: the command a header records is spelled one way, without the
// flags that say where or whether to write, and with no absolute path.
func TestStamp(t *testing.T) {
	wd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-cmd"}, "pipegen generate -cmd"},
		{[]string{"-check", "-pkg", "x", "-cmd=true"}, "pipegen generate -cmd"},
		{[]string{"-cmd=false", "-dump-ir"}, "pipegen generate"},
		{[]string{"-o=" + filepath.Join(wd, "out"), filepath.Join(wd, "testdata", "p.yaml")}, "pipegen generate -o out testdata/p.yaml"},
		{[]string{"-o", "my out", "p.yaml"}, `pipegen generate -o "my out" p.yaml`},
	} {
		fs := flag.NewFlagSet("generate", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.String("o", "", "")
		fs.String("pkg", "", "")
		fs.Bool("cmd", false, "")
		fs.Bool("check", false, "")
		fs.Bool("dump-ir", false, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got := stamp(fs)
		if got.Command != tc.want || got.Version == "" {
			t.Errorf("stamp of %q: command %q, version %q; want command %q", strings.Join(tc.args, " "), got.Command, got.Version, tc.want)
		}
	}
}
