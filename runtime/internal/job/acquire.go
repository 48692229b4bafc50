package job

import (
	"fmt"
	"io"

	"github.com/pipegen/pipegen/runtime/internal/connector"
)

// acquire takes, for this run, the checkpoint directory and the output of
// every transactional sink, so that a second instance of the job fails at
// once instead of both writing; release gives them back.
func (j *Job) acquire() (release func(), err error) {
	var held []io.Closer
	release = func() {
		for _, c := range held {
			c.Close()
		}
	}
	lock, err := j.cp.Acquire()
	if err != nil {
		return nil, err
	}
	held = append(held, lock)
	for i := range j.Config.Nodes {
		n := &j.Config.Nodes[i]
		c := connector.CommitterOf(n.Connector)
		if n.Section != "sinks" || c == nil {
			continue
		}
		l, err := c.Lock(j.opts.FS, n)
		if err != nil {
			release()
			return nil, fmt.Errorf("sinks.%s: %w", n.Name, err)
		}
		held = append(held, l)
	}
	return release, nil
}

// moveAside moves the checkpoints and every transactional sink's output of
// earlier runs aside, under names made of tag, for a run that starts over.
func (j *Job) moveAside(tag string) error {
	moved, err := j.cp.MoveAside(tag)
	if err != nil {
		return err
	}
	if moved != "" {
		j.Logf("%s", moved)
	}
	for i := range j.Config.Nodes {
		node := &j.Config.Nodes[i]
		c := connector.CommitterOf(node.Connector)
		if node.Section != "sinks" || c == nil {
			continue
		}
		moved, err := c.MoveAside(j.opts.FS, node, tag)
		if err != nil {
			return fmt.Errorf("sinks.%s: %w", node.Name, err)
		}
		if moved != "" {
			j.opts.Logger.Info(fmt.Sprintf("sinks.%s: %s", node.Name, moved), "node", node.Name)
		}
	}
	return nil
}
