package compile

import (
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestCommand(t *testing.T) {
	wd := "/home/me/proj"
	if runtime.GOOS == "windows" {
		wd = `C:\home\me\proj`
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "pipegen"},
		{[]string{"generate", "-cmd"}, "pipegen generate -cmd"},
		{[]string{"generate", "-o", filepath.Join(wd, "out", "x"), filepath.Join(wd, "p.yaml")}, "pipegen generate -o out/x p.yaml"},
		{[]string{"generate", "-o=" + filepath.Join(wd, "..", "elsewhere")}, "pipegen generate -o=../elsewhere"},
		{[]string{"build", "-o", "my prog", ""}, `pipegen build -o "my prog" ""`},
	} {
		if got := Command(tc.args, wd); got != tc.want {
			t.Errorf("Command(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestModuleVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"built from a checkout", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "(devel)"},
		{"installed", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.4.0"}}, "v0.4.0"},
		{"a tool of another module", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "golang.org/x/tools", Version: "v0.52.0"}, {Path: modulePath, Version: "v0.4.1"}}}, "v0.4.1"},
		{"replaced by a directory", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.0.0", Replace: &debug.Module{Path: "../.."}}}}, "(devel)"},
		{"replaced by another version", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.4.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v0.4.2"}}}}, "v0.4.2"},
		{"not linked", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}}, "(unknown)"},
	} {
		if got := moduleVersion(&tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
