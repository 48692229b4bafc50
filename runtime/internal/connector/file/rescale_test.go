package file

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// TestFileSourceRescale reads 9 files (with a CSV header, of 0 to 40
// lines) through parallelisms 2, 5, 5 (a rescaled position resumed at
// the same parallelism), 1 and 3, each subtask reading a random number of
// records between checkpoints: every line is read once, and the final
// positions name every file once (the check of a finished job's input).
func TestFileSourceRescale(t *testing.T) {
	dir := t.TempDir()
	want := map[string]int{}
	for i := range 9 {
		var b strings.Builder
		b.WriteString("name\n")
		for l := range (i * 7) % 41 {
			line := fmt.Sprintf("f%d-l%d", i, l)
			want[line] = 1
			fmt.Fprintln(&b, line)
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("in-%02d.csv", i)), b.String())
	}
	type row struct {
		Name string `csv:"name"`
	}
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		got := map[string]int{}
		var ns *storage.NodeState
		ps := []int{2, 5, 5, 1, 3}
		for round, p := range ps {
			j := fileSourceJob(t, p, map[string]string{"path": dir, "format": "csv"})
			next := &storage.NodeState{Parallelism: p}
			for sub := range p {
				var src *Source[row]
				err := connectortest.Catch(func() {
					src = NewSource(j, 0, sub, format.CSVFormatFor[row](j.Node(0)))
					switch {
					case ns == nil:
					case ns.Parallelism == p:
						pos, err := decodePosition(ns.Sources[sub].Position)
						if err != nil {
							t.Fatal(err)
						}
						src.lr.resumeAt(pos)
					default:
						src.lr.rescale(ns)
					}
					n := rng.IntN(60)
					if round == len(ps)-1 {
						n = 1 << 30
					}
					for range n {
						r, ok := src.Next()
						if !ok {
							if src.Done() {
								break
							}
							continue
						}
						got[r.Name]++
					}
				})
				if err != nil {
					t.Fatalf("seed %d, parallelism %d, subtask %d: %v", seed, p, sub, err)
				}
				next.Sources = append(next.Sources, src.lr.saved())
			}
			ns = next
		}
		for line, n := range got {
			if want[line] != n {
				t.Fatalf("seed %d: %s read %d times, want once", seed, line, n)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: read %d lines, want %d", seed, len(got), len(want))
		}
		n := config.NodeConfig{Options: map[string]string{"path": dir}}
		if err := (input{}).CheckFinished(&n, ns); err != nil {
			t.Errorf("seed %d: the final positions: %v", seed, err)
		}
	}
}
