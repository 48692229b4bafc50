package file

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// A file source restored at another parallelism shares out anew what its
// old subtasks had not read yet: each one's file in progress, from its
// position, and the files after it, whole. Sorted by file, the parts are
// dealt out, every P-th to each new subtask, which reads its parts one
// after the other (lineReader.queue) and then ends. Nothing is read twice or
// skipped. The files that were read to their end before go with subtask
// 0, which names them in its final position (input.CheckFinished).

// part is a file, or the rest of one, left to read.
type part struct {
	pos Position
	// partial is set when pos is within the file (checkRead applies).
	partial bool
	p       savedPosition
}

// rescale sets the subtask to its share of what the old subtasks of ns
// left.
func (s *lineReader) rescale(ns *storage.NodeState) {
	var parts []part
	var done []int
	for _, st := range ns.Sources {
		p, err := decodePosition(st.Position)
		if err != nil {
			fault.Abortf("sources.%s[%d]: restore position of subtask %d: %w", s.name, s.sub, st.Subtask, err)
		}
		var left []Position
		if p.File < len(s.files) {
			left = append(left, p.Position)
		}
		var all []int
		if p.rescaled {
			left = append(left, p.queue...)
			all = p.mine
		} else {
			for i := st.Subtask; i < len(s.files); i += ns.Parallelism {
				all = append(all, i)
			}
			for i := p.File + ns.Parallelism; p.File < len(s.files) && i < len(s.files); i += ns.Parallelism {
				left = append(left, Position{File: i, Name: s.files[i], Line: 1})
			}
		}
		unread := map[int]bool{}
		for _, l := range left {
			unread[l.File] = true
			parts = append(parts, part{pos: l, partial: l.Offset > 0, p: p})
		}
		for _, i := range all {
			if !unread[i] {
				done = append(done, i)
			}
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return cmp.Compare(a.pos.File, b.pos.File) })
	s.rescaled, s.queue, s.mine = true, nil, nil
	if s.sub == 0 {
		s.mine = append(s.mine, done...)
	}
	var mine []part
	for k := s.sub; k < len(parts); k += s.step {
		mine = append(mine, parts[k])
	}
	for _, pt := range mine {
		if pt.pos.File < 0 || pt.pos.File >= len(s.files) || s.files[pt.pos.File] != pt.pos.Name {
			fault.Abort(&fault.Fatal{Err: fmt.Errorf("sources.%s[%d]: the checkpoint's position is in %s, but the files the path matches changed; put them back as they were, or run with --fresh to start the job over", s.name, s.sub, pt.pos.Name)})
		}
		if pt.partial && pt.p.identified {
			if err := checkRead(savedPosition{Position: pt.pos, at: pt.p.at}); err != nil {
				fault.Abortf("sources.%s[%d]: %w; put the file back as it was, or run with --fresh to start the job over", s.name, s.sub, err)
			}
		}
		s.mine = append(s.mine, pt.pos.File)
	}
	slices.Sort(s.mine)
	if len(mine) == 0 {
		s.cur = len(s.files)
		return
	}
	for _, pt := range mine[1:] {
		s.queue = append(s.queue, pt.pos)
	}
	if err := s.Seek(mine[0].pos); err != nil {
		fault.Abort(err)
	}
}

// advance moves the subtask to its next file, at its end of the current.
func (s *lineReader) advance() {
	if !s.rescaled {
		s.cur += s.step
		return
	}
	if len(s.queue) == 0 {
		s.cur = len(s.files)
		return
	}
	next := s.queue[0]
	s.queue = s.queue[1:]
	if next.Offset == 0 {
		s.cur = next.File
		return
	}
	if err := s.Seek(next); err != nil {
		fault.Abort(err)
	}
}

// rest is the indexes of the files the subtask reads after the current.
func (s *lineReader) rest() []int {
	var out []int
	if s.rescaled {
		for _, q := range s.queue {
			out = append(out, q.File)
		}
		return out
	}
	for i := s.cur + s.step; i < len(s.files); i += s.step {
		out = append(out, i)
	}
	return out
}
