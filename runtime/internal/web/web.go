// Package web is the HTTP side of a running job (run --http ADDR):
// /metrics in Prometheus's text format, / a status page (one static page,
// embedded, that draws the job graph and refreshes itself from
// /api/status), and /healthz and /readyz for orchestrators.
//
// It listens on loopback unless another address is named; then every
// request must carry the token (Authorization: Bearer TOKEN, or ?token=
// for a browser), or it is refused with 401.
package web

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pipegen/pipegen/runtime/internal/metrics"
)

//go:embed status.html
var statusPage []byte

// Address resolves the --http flag's value: a port alone (9090 or :9090)
// listens on loopback; a host, on that host's address. It reports whether
// the address is on loopback, where only this machine's users reach it.
func Address(flag string) (addr string, loopback bool, err error) {
	if _, err := strconv.Atoi(flag); err == nil {
		flag = ":" + flag
	}
	host, port, err := net.SplitHostPort(flag)
	if err != nil {
		return "", false, fmt.Errorf("want PORT or HOST:PORT, got %q", flag)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	addr = net.JoinHostPort(host, port)
	if host == "localhost" {
		return addr, true, nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return "", false, fmt.Errorf("cannot resolve %q: %v", host, err)
		}
		for _, ip := range ips {
			if !ip.IsLoopback() {
				return addr, false, nil
			}
		}
		return addr, true, nil
	}
	return addr, ip.IsLoopback(), nil
}

// Server is the HTTP side of a job.
type Server struct {
	r     *metrics.Registry
	token string
	srv   *http.Server
	ln    net.Listener
}

// Listen starts serving the job's metrics r on addr; with a token, every
// request must carry it.
func Listen(addr, token string, r *metrics.Registry) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{r: r, token: token, ln: ln}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(newRegistry(r), promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /api/status", s.status)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
		w.Write(statusPage)
	})
	s.srv = &http.Server{Handler: s.guard(mux), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Addr is the address the server listens on (with the port the system
// chose for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting a scrape under way finish for a moment.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		s.srv.Close()
	}
}

// guard refuses a request without the token, when there is one.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if s.token != "" {
			got := req.URL.Query().Get("token")
			if bearer, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
				got = bearer
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="pipegen"`)
				http.Error(w, "401 unauthorized: this address needs the job's token (Authorization: Bearer TOKEN, or ?token=TOKEN)", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, req)
	})
}

// healthz answers while the process serves, unless the job has failed
// for good.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	if st := s.r.State(); st == metrics.Failed {
		http.Error(w, st, http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

// readyz answers 200 while the job runs: its subtasks are started (not
// starting, restarting or done).
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if st := s.r.State(); st != metrics.Running {
		http.Error(w, st, http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(Status(s.r))
}
