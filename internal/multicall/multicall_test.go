package multicall

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func program(name, greeting string) Program {
	return Program{Name: name, Files: map[string][]byte{
		"main.go":     []byte("// Command " + name + " greets.\npackage main\n\nimport \"os\"\n\nfunc main() {\n\tos.Stdout.WriteString(greeting + \" \" + os.Args[1] + \"\\n\")\n}\n"),
		"greeting.go": []byte("package main\n\nvar greeting = " + `"` + greeting + `"` + "\n\nfunc escapes() *int {\n\tx := 1\n\treturn &x\n}\n"),
	}}
}

// TestBuild links two programs into one binary and runs each by its link:
// each runs its own main with its own package's variables, and the
// compiler's escape analysis is told apart by program.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("links a program")
	}
	module, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	built, err := Build([]Program{program("hello", "hello"), program("hi", "hi")},
		Options{ModuleDir: module, ModulePath: "github.com/pipegen/pipegen", Dir: t.TempDir(), Gcflags: "-m"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"hello": "hello world\n", "hi": "hi world\n"} {
		out, err := exec.Command(built.Paths[name], "world").CombinedOutput()
		if err != nil || string(out) != want {
			t.Errorf("%s world: %q, %v; want %q", name, out, err, want)
		}
		if c := built.Compiler[name]; !strings.Contains(c, name+"/greeting.go") || !strings.Contains(c, "moved to heap: x") {
			t.Errorf("the compiler's output for %s does not have its escape analysis:\n%s", name, c)
		}
	}
}

// TestOverlay builds a program that imports a package whose file is only
// in Options.Overlay.
func TestOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("links a program")
	}
	module, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/pipegen/pipegen/internal/multicall/overlaid"
	prog := Program{Name: "hey", Files: map[string][]byte{
		"main.go": []byte("package main\n\nimport (\n\t\"os\"\n\n\t\"" + pkg + "\"\n)\n\nfunc main() {\n\tos.Stdout.WriteString(overlaid.Word + \"\\n\")\n}\n"),
	}}
	overlay := map[string][]byte{filepath.Join(module, "internal", "multicall", "overlaid", "word.go"): []byte("package overlaid\n\nvar Word = \"hey\"\n")}
	built, err := Build([]Program{prog}, Options{ModuleDir: module, ModulePath: "github.com/pipegen/pipegen", Dir: t.TempDir(), Overlay: overlay})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(built.Paths["hey"]).CombinedOutput(); err != nil || string(out) != "hey\n" {
		t.Errorf("hey: %q, %v; want %q", out, err, "hey\n")
	}
	if dirs := overlayDirs(Options{ModuleDir: module, Overlay: overlay}); len(dirs) != 1 || dirs[0] != "internal/multicall/overlaid" {
		t.Errorf("the overlay's folders: %q, want the one of its file", dirs)
	}
}

// TestAsLibrary: a main package's files become a package program whose
// main is Main, and what is not one program is refused.
func TestAsLibrary(t *testing.T) {
	lib, isMain, err := asLibrary([]byte("// Doc.\npackage main\n\nfunc main() {\n}\n"))
	if err != nil || !isMain || string(lib) != "// Doc.\npackage program\n\nfunc Main() {\n}\n" {
		t.Errorf("asLibrary: %q, %v, %v", lib, isMain, err)
	}
	if _, _, err := asLibrary([]byte("package other\n")); err == nil {
		t.Error("a file of package other: no error")
	}
	_, err = Build([]Program{{Name: "two", Files: map[string][]byte{
		"a.go": []byte("\npackage main\n\nfunc main() {\n}\n"),
		"b.go": []byte("\npackage main\n\nfunc main() {\n}\n"),
	}}}, Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "2 files declare func main") {
		t.Errorf("two mains: %v", err)
	}
}
