package codegen_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/ir"
)

// packagePipeline is a keyed pipeline, so that the file has every kind of
// package-level name: chains, node indexes, hash and serializers.
func packagePipeline() *ir.Pipeline {
	return pipeline(source("lines"), mapNode("upper", 0, ir.Forward), reduceNode("longest", 1), sink("out", 2, ir.Forward))
}

func TestGeneratePackageMode(t *testing.T) {
	p := packagePipeline()
	files, err := codegen.Generate(p, codegen.Options{Package: true, Cmd: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "words_pipegen.go" || files[1].Name != "cmd/words/main.go" {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		checkFile(t, f)
	}
	again, err := codegen.Generate(packagePipeline(), codegen.Options{Package: true, Cmd: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if !bytes.Equal(files[i].Content, again[i].Content) {
			t.Errorf("%s differs between two runs", files[i].Name)
		}
	}

	src := string(files[0].Content)
	if lines := strings.SplitN(src, "\n", 6); lines[3] != "//go:build !"+codegen.BuildTag || !strings.HasPrefix(lines[5], "package words\n") {
		t.Errorf("the file starts\n%s", strings.Join(lines[:5], "\n"))
	}
	f, err := parser.ParseFile(token.NewFileSet(), files[0].Name, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if strings.Contains(imp.Path.Value, userPkg) {
			t.Errorf("the file imports its own package %s", imp.Path.Value)
		}
	}
	// Every package-level name but the entry point has the prefix.
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	prefixed := 0
	for _, n := range names {
		switch {
		case n == "_" || n == codegen.RunFunc("words"):
		case strings.HasPrefix(n, codegen.Prefix("words")):
			prefixed++
		default:
			t.Errorf("package-level name %s has no prefix %s", n, codegen.Prefix("words"))
		}
	}
	if prefixed < 10 {
		t.Errorf("only %d prefixed names: %v", prefixed, names)
	}
	// The user's functions are called unqualified; comments name the
	// generated declarations by their new names.
	wantContains(t, src,
		"func RunWords(args []string) int {\n\treturn runtime.Run(runtime.Program{Config: pipegenWordsConfig, Build: pipegenWordsBuild}, args)\n}",
		"Upper(r)", "Key(r)", "Longer(*acc, r)",
		"// pipegenWordsConfig holds the settings",
		"// pipegenWordsBuild wires one run",
		"runtime.EnforceVersion(runtime.GenVersion - ",
	)
	if strings.Contains(src, "words.") {
		t.Errorf("the file still qualifies a name with words.:\n%s", src)
	}

	main := string(files[1].Content)
	wantContains(t, main, "package main", "\t\""+userPkg+"\"\n", "os.Exit(words.RunWords(os.Args[1:]))")
}

func TestGeneratePackageModeNames(t *testing.T) {
	p := packagePipeline()
	p.Name = "word-count"
	p.Package.Name = "wc" // not the last element of the path: the main imports it by name
	files, err := codegen.Generate(p, codegen.Options{Package: true, Cmd: true})
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Name != "word-count_pipegen.go" || files[1].Name != "cmd/word-count/main.go" {
		t.Errorf("files %s, %s", files[0].Name, files[1].Name)
	}
	wantContains(t, string(files[0].Content), "package wc\n", "func RunWordCount(args []string) int", "pipegenWordCountConfig")
	wantContains(t, string(files[1].Content), "\twc \""+userPkg+"\"\n", "os.Exit(wc.RunWordCount(os.Args[1:]))")
	if codegen.RunFunc("a-b-c") != "RunABC" || codegen.PackageFile("linux") != "linux_pipegen.go" || codegen.CmdFile("x") != "cmd/x/main.go" {
		t.Error("names of package mode")
	}
	// Without Package, Cmd changes nothing: a main package.
	files, err = codegen.Generate(packagePipeline(), codegen.Options{Cmd: true})
	if err != nil || len(files) != 2 || files[0].Name != "main.go" {
		t.Errorf("Generate without Package: %v, %v", files, err)
	}
}

// TestGeneratePackageModeDeclared: names the user's package declares are
// not the generated file's: its declarations and its imports take others.
func TestGeneratePackageModeDeclared(t *testing.T) {
	mine := []string{"pipegenWordsConfig", "pipegenWordsLongestChain", "pipegenWordsHashKeyLongest", "state", "runtime"}
	files, err := codegen.Generate(packagePipeline(), codegen.Options{Package: true, Declared: func(name string) bool { return slices.Contains(mine, name) }})
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, files[0])
	src := string(files[0].Content)
	wantContains(t, src,
		"\truntime2 \"github.com/pipegen/pipegen/runtime\"\n",
		"\tstate2 \"github.com/pipegen/pipegen/runtime/state\"\n",
		"return runtime2.Run(runtime2.Program{Config: pipegenWordsConfig2, Build: pipegenWordsBuild}, args)",
		"// pipegenWordsConfig2 holds the settings",
		"type pipegenWordsLongestChain2 struct",
		"*state2.Memory[string, string]",
		"func pipegenWordsHashKeyLongest2(k string) uint64",
	)
	for _, decl := range []string{"var pipegenWordsConfig ", "type pipegenWordsLongestChain ", "func pipegenWordsHashKeyLongest(",
		"\t\"github.com/pipegen/pipegen/runtime\"\n", "\t\"github.com/pipegen/pipegen/runtime/state\"\n"} {
		if strings.Contains(src, decl) {
			t.Errorf("the file still has %q, the user's name", decl)
		}
	}
}
