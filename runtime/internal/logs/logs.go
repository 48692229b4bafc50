// Package logs is how a generated program logs, through log/slog: by
// default the human text it always printed, one line "JOB: MESSAGE" per
// record; with --log-format json one JSON object per line, with the time,
// level, message, job and, where the line is about one, the node and
// subtask (attributes "node" and "subtask").
package logs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// The formats of --log-format.
const (
	Text = "text"
	JSON = "json"
)

// New returns the logger of job, writing to w in format (Text or JSON).
func New(w io.Writer, format, job string) (*slog.Logger, error) {
	switch format {
	case "", Text:
		return slog.New(&textHandler{w: w, job: job, mu: new(sync.Mutex)}), nil
	case JSON:
		return slog.New(slog.NewJSONHandler(w, nil)).With("job", job), nil
	}
	return nil, fmt.Errorf("--log-format wants text or json, got %q", format)
}

// textHandler writes "JOB: MESSAGE": the message says what the line is
// about (a subtask's lines name it as HEAD[i] or sources.NAME[i]); the
// attributes are for machines, and the JSON format has them.
type textHandler struct {
	w   io.Writer
	job string
	mu  *sync.Mutex
}

func (h *textHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, h.job+": "+r.Message+"\n")
	return err
}

func (h *textHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *textHandler) WithGroup(string) slog.Handler      { return h }
