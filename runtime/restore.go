package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pipegen/pipegen/runtime/vfs"
)

// errFinished is returned when the checkpoint to resume from is a final
// one: the job ran to the end of its input already.
var errFinished = errors.New("finished")

// prepareRun decides where the job starts: from a checkpoint (the one named
// by from, or the newest complete and intact one in the checkpoint
// directory) or from the beginning. It commits the restored checkpoint's
// sink files, removes sink files that no checkpoint commits, and sets the
// number of the next checkpoint.
func (j *Job) prepareRun(st *Storage, from string) error {
	entries, err := st.List()
	if err != nil {
		return fmt.Errorf("read checkpoint directory %s: %w", st.Dir, err)
	}
	j.nextID = 1
	if len(entries) > 0 {
		j.nextID = entries[len(entries)-1].ID + 1
	}
	var l *Loaded
	switch {
	case from != "":
		if l, err = loadCheckpoint(j.fs, from); err != nil {
			return fmt.Errorf("--from-checkpoint %s: %w", from, err)
		}
	case j.Config.Checkpoint.Mode != NoCheckpoints:
		for i := len(entries) - 1; i >= 0 && l == nil; i-- {
			e := entries[i]
			if !e.Complete {
				if e.ID > j.newestComplete(entries) {
					j.Logf("checkpoint %d is incomplete (no manifest): skipping it", e.ID)
				}
				continue
			}
			if l, err = st.Load(e.ID); err != nil {
				j.Logf("checkpoint %d is damaged, skipping it: %v", e.ID, err)
				l = nil
			}
		}
	}
	if l == nil {
		return j.cleanSinkDirs(nil)
	}
	if err := j.checkCompatible(l.Manifest); err != nil {
		return fmt.Errorf("cannot resume from %s: %w", l.Dir, err)
	}
	if err := commitSinks(j.fs, l.Manifest); err != nil {
		return fmt.Errorf("commit the output of %s: %w", l.Dir, err)
	}
	j.committed.Store(l.Manifest.ID)
	if err := j.cleanSinkDirs(l.Manifest); err != nil {
		return err
	}
	j.restored = l
	if l.Manifest.Final {
		return errFinished
	}
	if !j.quiet {
		j.Logf("resuming from checkpoint %d (%s)", l.Manifest.ID, l.Dir)
	}
	return nil
}

func (j *Job) newestComplete(entries []Entry) int64 {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Complete {
			return entries[i].ID
		}
	}
	return 0
}

// checkCompatible refuses a checkpoint this program cannot resume from.
func (j *Job) checkCompatible(m *Manifest) error {
	cfg := j.Config
	if m.MaxParallelism != cfg.MaxParallelism {
		return fmt.Errorf("it has %d key groups (max-parallelism) and this run %d: max-parallelism is fixed for the life of the state", m.MaxParallelism, cfg.MaxParallelism)
	}
	for _, n := range cfg.Nodes {
		ns := m.Node(n.UID)
		if ns == nil || n.Kind != "source" || len(ns.Sources) == 0 {
			continue
		}
		if ns.Parallelism != n.Parallelism {
			return fmt.Errorf("source %s ran with %d subtasks and this run has %d: sources cannot change parallelism yet; run with --set sources.%s.parallelism=%d", n.Name, ns.Parallelism, n.Parallelism, n.Name, ns.Parallelism)
		}
	}
	return nil
}

// RestoredSource returns the read position a source subtask resumes from,
// or nil when it starts from the beginning.
func (j *Job) RestoredSource(node, sub int) *SourceState {
	if j.restored == nil {
		return nil
	}
	ns := j.restored.Manifest.Node(j.Node(node).UID)
	if ns == nil {
		return nil
	}
	for i := range ns.Sources {
		if ns.Sources[i].Subtask == sub {
			return &ns.Sources[i]
		}
	}
	return nil
}

// restoredSink returns the state a sink subtask resumes from: its own, or,
// for a subtask new in this run, a next file number above every other.
func (j *Job) restoredSink(node, sub int) (state SinkState, ok bool) {
	if j.restored == nil {
		return SinkState{}, false
	}
	ns := j.restored.Manifest.Node(j.Node(node).UID)
	if ns == nil {
		return SinkState{}, false
	}
	var highest uint64
	for _, s := range ns.Sinks {
		if s.Subtask == sub {
			return s, true
		}
		highest = max(highest, s.NextSeq)
	}
	return SinkState{Subtask: sub, NextSeq: highest}, true
}

// retiredSinks returns the sink states of node n's subtasks in the
// checkpoint the job resumes from that this run does not have (its
// parallelism is lower), without pending files (prepareRun committed
// them). Every checkpoint carries them on, so that a subtask that comes
// back with a higher parallelism numbers its files after the ones it
// committed before instead of overwriting them.
func (j *Job) retiredSinks(n *NodeConfig) []SinkState {
	if j.restored == nil {
		return nil
	}
	ns := j.restored.Manifest.Node(n.UID)
	if ns == nil {
		return nil
	}
	var retired []SinkState
	for _, s := range ns.Sinks {
		if s.Subtask >= n.Parallelism {
			retired = append(retired, SinkState{Subtask: s.Subtask, NextSeq: s.NextSeq, Dir: s.Dir})
		}
	}
	return retired
}

// cleanSinkDirs removes from every file sink's directory the files that no
// completed checkpoint commits: in-progress and pending files, and, when
// resuming, committed files newer than the checkpoint (from a newer one
// that was found damaged). Starting from the beginning, a sink's earlier
// output is removed: the run replaces it.
func (j *Job) cleanSinkDirs(m *Manifest) error {
	for i, n := range j.Config.Nodes {
		if n.Section != "sinks" || n.Connector != "file" {
			continue
		}
		dir, err := filepath.Abs(n.Option("path"))
		if err != nil {
			return err
		}
		next := map[int]uint64{}
		if m != nil {
			if ns := m.Node(n.UID); ns != nil {
				for _, s := range ns.Sinks {
					next[s.Subtask] = s.NextSeq
				}
			}
		}
		entries, err := j.fs.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sinks.%s: %w", n.Name, err)
		}
		removed := 0
		for _, e := range entries {
			sub, seq, hidden, ok := parsePartName(e.Name())
			if !ok {
				continue
			}
			stale := hidden || m == nil
			if !stale {
				limit, known := next[sub]
				stale = known && seq >= limit
			}
			if !stale {
				continue
			}
			if err := j.fs.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("sinks.%s: %w", n.Name, err)
			}
			removed++
		}
		if removed > 0 {
			if err := vfs.SyncDir(j.fs, dir); err != nil {
				return fmt.Errorf("sinks.%s: %w", n.Name, err)
			}
			if !j.quiet {
				what := "files no checkpoint commits"
				if m == nil {
					what = "files of an earlier run"
				}
				j.Logf("sinks.%s: removed %d %s from %s", j.Config.Nodes[i].Name, removed, what, dir)
			}
		}
	}
	return nil
}

// parsePartName reads a sink file name: part-SUB-SEQ when committed,
// .part-SUB-SEQ.inprogress or .part-SUB-SEQ.pending before.
func parsePartName(name string) (sub int, seq uint64, hidden, ok bool) {
	base := name
	if strings.HasPrefix(name, ".") {
		hidden = true
		base = strings.TrimPrefix(name, ".")
		if b, cut := strings.CutSuffix(base, ".inprogress"); cut {
			base = b
		} else if b, cut := strings.CutSuffix(base, ".pending"); cut {
			base = b
		} else {
			return 0, 0, false, false
		}
	}
	rest, cut := strings.CutPrefix(base, "part-")
	if !cut {
		return 0, 0, false, false
	}
	subText, seqText, cut := strings.Cut(rest, "-")
	if !cut {
		return 0, 0, false, false
	}
	s, err1 := strconv.Atoi(subText)
	q, err2 := strconv.ParseUint(seqText, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false, false
	}
	return s, q, hidden, true
}
