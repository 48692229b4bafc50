package job

import (
	"errors"
	"fmt"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// output is the job's transactional sinks as the checkpoint protocol sees
// them: each sink's connector commits and cleans up its own output.
type output struct{ j *Job }

// Commit makes the output of every sink in checkpoint m visible, also of
// sinks that this version of the job no longer has: it belongs to the
// checkpoint.
func (o output) Commit(m *storage.Manifest) error {
	var errs []error
	for _, n := range m.Nodes {
		if len(n.Sinks) == 0 {
			continue
		}
		c := connector.CommitterOf(n.SinkConnector())
		if c == nil {
			errs = append(errs, fmt.Errorf("sinks.%s: checkpoint %d has output of connector %q, which this program cannot commit", n.Name, m.ID, n.SinkConnector()))
			continue
		}
		cfg := o.node(n.UID)
		for _, s := range n.Sinks {
			if err := c.Commit(o.j.opts.FS, cfg, s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// node returns this run's settings of the node with the given uid, nil
// when this version of the job has none.
func (o output) node(uid string) *config.NodeConfig {
	for i := range o.j.Config.Nodes {
		if o.j.Config.Nodes[i].UID == uid {
			return &o.j.Config.Nodes[i]
		}
	}
	return nil
}

// Clean removes, from every transactional sink, the output that no
// completed checkpoint commits; m is the checkpoint the run resumes from,
// nil for a fresh start.
func (o output) Clean(m *storage.Manifest) error {
	for i := range o.j.Config.Nodes {
		n := &o.j.Config.Nodes[i]
		if n.Section != "sinks" {
			continue
		}
		c := connector.CommitterOf(n.Connector)
		if c == nil {
			continue
		}
		var committed *storage.NodeState
		if m != nil {
			if committed = m.Node(n.UID); committed == nil {
				committed = &storage.NodeState{UID: n.UID}
			}
		}
		removed, err := c.Clean(o.j.opts.FS, n, committed)
		if err != nil {
			return fmt.Errorf("sinks.%s: %w", n.Name, err)
		}
		if removed != "" && !o.j.opts.Quiet {
			o.j.opts.Logger.Info(fmt.Sprintf("sinks.%s: removed %s", n.Name, removed), "node", n.Name)
		}
	}
	return nil
}
