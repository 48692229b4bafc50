package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGraphCommand draws golden cases with the command line and compares
// with the goldens that golden/graph_test.go keeps: the command writes
// what the library draws, in each format, to standard output or -o.
func TestGraphCommand(t *testing.T) {
	for _, f := range []struct{ format, file string }{{"dot", "graph.dot"}, {"mermaid", "graph.mmd"}, {"svg", "graph.svg"}} {
		want, err := os.ReadFile(filepath.Join("..", "..", "golden", "fanout", "graph", f.file))
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{"graph", "-format", f.format, "../../golden/fanout/pipeline.yaml"}, &stdout, &stderr); code != 0 {
			t.Fatalf("graph -format %s: exit %d: %s", f.format, code, stderr.String())
		}
		if !bytes.Equal(stdout.Bytes(), want) {
			t.Errorf("graph -format %s differs from golden/fanout/graph/%s", f.format, f.file)
		}
	}
	out := filepath.Join(t.TempDir(), "g.svg")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"graph", "-format", "svg", "-o", out, "-pkg", "../../golden/annotated-shop"}, &stdout, &stderr); code != 0 {
		t.Fatalf("graph -pkg: exit %d: %s", code, stderr.String())
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile("../../golden/annotated-shop/graph/graph.svg")
	if !bytes.Equal(got, want) || len(got) == 0 {
		t.Errorf("graph -pkg -o wrote %d bytes, not golden/annotated-shop/graph/graph.svg", len(got))
	}
	stderr.Reset()
	if code := run([]string{"graph", "-format", "png", "../../golden/fanout/pipeline.yaml"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "-format wants dot, mermaid or svg") {
		t.Errorf("graph -format png: exit %d, %q; want 2 and the formats", code, stderr.String())
	}
}
