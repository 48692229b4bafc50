package compile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/pipegen/pipegen/codegen"
	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/schema"
)

// savedNode is what pipegen check --savepoint reads of a node in a
// savepoint's (or checkpoint's) MANIFEST: the fields of the runtime's
// manifest (runtime/internal/storage) that the restore rules look at.
type savedNode struct {
	UID             string            `json:"uid"`
	Name            string            `json:"name"`
	Kind            string            `json:"kind"`
	Connector       string            `json:"connector"`
	KeySchema       string            `json:"keySchema"`
	ValueSchema     string            `json:"valueSchema"`
	BroadcastSchema string            `json:"broadcastSchema"`
	Files           []json.RawMessage `json:"files"`
	Sources         []json.RawMessage `json:"sources"`
}

type savedManifest struct {
	ID             int64       `json:"id"`
	Job            string      `json:"job"`
	Savepoint      bool        `json:"savepoint"`
	MaxParallelism int         `json:"maxParallelism"`
	Nodes          []savedNode `json:"nodes"`
}

// readSavedManifest reads and verifies the MANIFEST of the savepoint (or
// checkpoint) folder dir.
func readSavedManifest(dir string) (*savedManifest, error) {
	path := filepath.Join(dir, "MANIFEST")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	i := bytes.LastIndex(data, []byte("crc32c "))
	var want uint32
	if i < 0 || func() bool { _, err := fmt.Sscanf(string(data[i:]), "crc32c %08x\n", &want); return err != nil }() {
		return nil, fmt.Errorf("savepoint: %s: no checksum line: is it a savepoint's MANIFEST?", path)
	}
	if got := crc32.Checksum(data[:i], crc32.MakeTable(crc32.Castagnoli)); got != want {
		return nil, fmt.Errorf("savepoint: %s: checksum mismatch: the file is damaged", path)
	}
	var m savedManifest
	if err := json.Unmarshal(data[:i], &m); err != nil {
		return nil, fmt.Errorf("savepoint: %s: %w", path, err)
	}
	return &m, nil
}

// CheckSavepoint checks the pipeline at path, and then whether it can
// start from the savepoint (or checkpoint) in folder sp: the verdict a run
// with --from-savepoint gives, before anything is built or run. Every
// incompatibility is reported at the new pipeline's node, or at the Go
// type whose field changed, as a *diag.List. allowNonRestored is run
// --allow-non-restored-state: state of a node the pipeline no longer has
// is then left behind, with a warning.
func CheckSavepoint(path, sp string, allowNonRestored bool) (*ir.Pipeline, error) {
	p, err := Check(path)
	if err != nil {
		return nil, err
	}
	m, err := readSavedManifest(sp)
	if err != nil {
		return nil, err
	}
	return p, checkAgainst(p, diag.Pos{File: path}, m, sp, allowNonRestored)
}

// CheckPackageSavepoint is CheckSavepoint for the pipelines annotated in
// the Go package in dir: the one the savepoint is of (by its job name), or
// the only one.
func CheckPackageSavepoint(dir, sp string, allowNonRestored bool) (*ir.Pipeline, error) {
	pk, err := checkPackage(dir)
	if err != nil {
		return nil, err
	}
	m, err := readSavedManifest(sp)
	if err != nil {
		return nil, err
	}
	var p *ir.Pipeline
	for _, r := range pk.Pipelines {
		if r.IR.Name == m.Job || len(pk.Pipelines) == 1 {
			p = r.IR
		}
	}
	if p == nil {
		return nil, fmt.Errorf("the package in %s has no pipeline %s, the job of savepoint %s", dir, m.Job, sp)
	}
	return p, checkAgainst(p, pk.pipelinePos(p.Name), m, sp, allowNonRestored)
}

// checkAgainst reports what keeps pipeline p, declared at top, from
// starting from the savepoint m in folder sp.
func checkAgainst(p *ir.Pipeline, top diag.Pos, m *savedManifest, sp string, allowNonRestored bool) error {
	what := fmt.Sprintf("savepoint %s", sp)
	if !m.Savepoint {
		what = fmt.Sprintf("checkpoint %s", sp)
	}
	var l diag.List
	if m.Job != "" && m.Job != p.Name {
		l.Add(top, "%s is of job %s, not of %s", what, m.Job, p.Name)
	}
	if m.MaxParallelism != p.MaxParallelism {
		l.Add(top, "%s has %d key groups (max-parallelism) and this pipeline %d: max-parallelism is fixed for the life of the state; set max-parallelism: %d", what, m.MaxParallelism, p.MaxParallelism, m.MaxParallelism)
	}
	states := codegen.StateSchemas(p)
	at := func(pos ir.Pos) diag.Pos {
		if pos.File == "" {
			return top
		}
		file := pos.File
		if p.ModuleDir != "" && !filepath.IsAbs(file) {
			file = filepath.Join(p.ModuleDir, file)
		}
		return diag.Pos{File: file, Line: pos.Line, Col: pos.Col}
	}
	for _, old := range m.Nodes {
		if len(old.Files) == 0 && len(old.Sources) == 0 {
			continue
		}
		idx := -1
		for i, n := range p.Nodes {
			if n.UID == old.UID {
				idx = i
			}
		}
		if idx < 0 {
			if allowNonRestored {
				l.Report(diag.Diagnostic{Pos: top, Severity: diag.Warning, Msg: fmt.Sprintf("the state of %s %q (uid %s) in the %s is left behind: this pipeline has no node with that uid", old.Kind, old.Name, old.UID, what)})
				continue
			}
			l.Add(top, "%s holds the state of %s %q (uid %s), which this pipeline does not have: it would be lost (give a node uid: %s, or run with --allow-non-restored-state)", what, old.Kind, old.Name, old.UID, old.UID)
			continue
		}
		n := p.Nodes[idx]
		pos := at(n.Pos)
		switch {
		case old.Kind != "" && old.Kind != string(n.Kind):
			l.Add(pos, "%q (uid %s) was of kind %s in the %s and is of kind %s now: its state cannot be read", n.Name, n.UID, old.Kind, what, n.Kind)
			continue
		case len(old.Sources) > 0 && old.Connector != "" && old.Connector != n.Connector:
			l.Add(pos, "source %q (uid %s) read with connector %s in the %s and with %s now: its read position cannot be used", n.Name, n.UID, old.Connector, what, n.Connector)
			continue
		}
		st, keyed := states[idx]
		if old.BroadcastSchema != "" && st.BroadcastSchema != "" {
			if err := schema.CompatibleStrings(old.BroadcastSchema, st.BroadcastSchema); err != nil {
				l.Add(pos, "the broadcast state of %q (uid %s) in the %s cannot be read by this pipeline: %v", n.Name, n.UID, what, err)
			}
		}
		if len(old.Files) == 0 || !keyed || old.KeySchema == "" {
			continue
		}
		if old.KeySchema != st.KeySchema {
			l.Add(pos, "the key of %q (uid %s) was %s in the %s and is %s now: keys decide where state lives, so its state cannot be read", n.Name, n.UID, old.KeySchema, what, st.KeySchema)
			continue
		}
		if err := schema.CompatibleStrings(old.ValueSchema, st.ValueSchema); err != nil {
			l.Add(typePos(st.Value, err, pos, at), "the state of %q (uid %s) in the %s cannot be read by this pipeline: %v", n.Name, n.UID, what, err)
		}
	}
	if l.HasErrors() {
		return &l
	}
	warn(&l)
	return nil
}

// typePos is where to report that the state type t cannot read the
// savepoint's (err): at the field the message names (the path before
// " was ", "Acc.Count"), or at the type's first field; def when t is not
// a struct with positions.
func typePos(t *ir.Type, err error, def diag.Pos, at func(ir.Pos) diag.Pos) diag.Pos {
	for t != nil && t.Kind == ir.NamedType {
		t = t.Underlying
	}
	if t == nil || len(t.Fields) == 0 {
		return def
	}
	msg := err.Error()
	if i := strings.Index(msg, " was "); i > 0 {
		// The innermost field of the path that is one of t's: a field
		// of a field's type, or a map state's key or value, is reported
		// at the field of t that holds it.
		path := strings.Split(msg[:i], ".")
		for j := len(path) - 1; j >= 0; j-- {
			for _, f := range t.Fields {
				if f.Name == path[j] && f.Pos.File != "" {
					return at(f.Pos)
				}
			}
		}
	}
	if t.Fields[0].Pos.File == "" {
		return def
	}
	return at(t.Fields[0].Pos)
}
