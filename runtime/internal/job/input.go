package job

import (
	"errors"
	"fmt"

	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/storage"
)

// checkFinishedInput returns an error unless every source's input is what
// it read to the end in m, the final checkpoint the run resumes from: a
// finished job rerun on other input must say so, not report its old
// output as the result.
func (j *Job) checkFinishedInput(m *storage.Manifest) error {
	var errs []error
	for i := range j.Config.Nodes {
		n := &j.Config.Nodes[i]
		c := connector.InputCheckerOf(n.Connector)
		read := m.Node(n.UID)
		if n.Section != "sources" || c == nil || read == nil {
			continue
		}
		if err := c.CheckFinished(n, read); err != nil {
			errs = append(errs, fmt.Errorf("sources.%s: %w", n.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("checkpoint %d is final: the job ran to the end of its input, but the input changed since: %w\nrun with --fresh to run the job again on this input", m.ID, err)
	}
	return nil
}
