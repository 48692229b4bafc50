// The command line's observability: run --http, the failures the status page
// lists, and the end-of-run summary of what the job dropped.

package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/pipegen/pipegen/runtime/events"
	"github.com/pipegen/pipegen/runtime/internal/fault"
	"github.com/pipegen/pipegen/runtime/internal/metrics"
	"github.com/pipegen/pipegen/runtime/internal/web"
)

// serve starts the job's HTTP side on the --http address, with the token
// of --http-token-file or $PIPEGEN_HTTP_TOKEN, which an address beyond
// loopback requires. It returns nil and the exit status when it cannot.
func serve(name, flag, tokenFile string, reg *metrics.Registry, log *slog.Logger, stderr io.Writer) (*web.Server, int) {
	addr, loopback, err := web.Address(flag)
	if err != nil {
		fmt.Fprintf(stderr, "%s run: --http: %v\n", name, err)
		return nil, exitUsage
	}
	token := os.Getenv("PIPEGEN_HTTP_TOKEN")
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "%s run: --http-token-file: %v\n", name, err)
			return nil, exitUsage
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			fmt.Fprintf(stderr, "%s run: --http-token-file: %s is empty\n", name, tokenFile)
			return nil, exitUsage
		}
	}
	if !loopback && token == "" {
		fmt.Fprintf(stderr, "%s run: --http %s listens beyond this machine: give a token with --http-token-file FILE or $PIPEGEN_HTTP_TOKEN, which every request must then carry\n", name, flag)
		return nil, exitUsage
	}
	srv, err := web.Listen(addr, token, reg)
	if err != nil {
		fmt.Fprintf(stderr, "%s run: --http: %v\n", name, err)
		return nil, exitUsage
	}
	log.Info(fmt.Sprintf("status page at http://%s/, metrics at http://%s/metrics", srv.Addr(), srv.Addr()), "http", srv.Addr())
	return srv, exitOK
}

// logError logs a failure of the job, with the node and subtask it
// happened in when the error says.
func logError(log *slog.Logger, err error) {
	if node, sub, ok := fault.Where(err); ok {
		log.Error(err.Error(), "node", node, "subtask", sub)
		return
	}
	log.Error(err.Error())
}

// failure is err as the status page lists it.
func failure(err error, restarted bool) metrics.Failure {
	f := metrics.Failure{Time: time.Now().UTC(), Error: firstLine(err), Restarted: restarted}
	f.Node, f.Subtask, _ = fault.Where(err)
	var pe *fault.PanicError
	if errors.As(err, &pe) {
		f.Record, f.Origin = pe.Record, pe.Origin
	}
	return f
}

// summary logs what the job's nodes dropped or sent aside: warnings, so
// that --quiet keeps them.
func summary(log *slog.Logger, reg *metrics.Registry) {
	for _, d := range reg.Drops() {
		attrs := []any{"node", d.Name, "reason", d.Reason}
		if d.Records > 0 {
			log.Warn(d.Text(), append(attrs, "dropped", d.Records)...)
		} else {
			log.Info(d.Text(), append(attrs, "aside", d.Aside)...)
		}
	}
}

// drops are what the job's nodes dropped, for the done event.
func drops(reg *metrics.Registry) []events.Drop {
	var ds []events.Drop
	for _, d := range reg.Drops() {
		if d.Records > 0 {
			ds = append(ds, events.Drop{Node: d.Name, Reason: d.Reason, Records: int64(d.Records)})
		}
	}
	return ds
}
