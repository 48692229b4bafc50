// Package control is how a person (or a script) talks to a running job:
// the job listens on 127.0.0.1 only, on a port the system picks, and
// writes the address and a random token to the file CONTROL of its
// checkpoint directory (mode 0600: only its user can read it). Every
// request must carry the token (Authorization: Bearer TOKEN); one without
// it, or with another, is refused before anything is done. The program's
// savepoint and stop commands are the clients.
package control

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileName is the name of the control file in the checkpoint directory.
const FileName = "CONTROL"

// File is what the control file holds.
type File struct {
	Addr  string `json:"addr"`
	Token string `json:"token"`
	PID   int    `json:"pid"`
}

// Handler does what the requests ask of the running job.
type Handler interface {
	// Savepoint takes a savepoint into dir ("" for the default folder)
	// and, with stop, stops the job at it (with drain, after its sources
	// have stopped reading and ended event time); it returns the
	// savepoint's path.
	Savepoint(ctx context.Context, dir string, stop, drain bool) (path string, checkpoint int64, err error)
	// Stop stops the job at a checkpoint taken now, as SIGTERM does.
	Stop() error
}

// Server is a job's control endpoint.
type Server struct {
	file  string
	token string
	ln    net.Listener
	srv   *http.Server
	done  chan struct{}
}

// Serve listens on 127.0.0.1 on a free port, for requests to h, and
// writes the control file into dir (created if missing).
func Serve(dir string, h Handler) (*Server, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	s := &Server{file: filepath.Join(dir, FileName), token: hex.EncodeToString(b[:]), ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /savepoint", s.auth(func(w http.ResponseWriter, r *http.Request) {
		path, id, err := h.Savepoint(r.Context(), r.FormValue("dir"), r.FormValue("stop") == "1", r.FormValue("drain") == "1")
		reply(w, Reply{Path: path, Checkpoint: id}, err)
	}))
	mux.HandleFunc("POST /stop", s.auth(func(w http.ResponseWriter, r *http.Request) {
		reply(w, Reply{}, h.Stop())
	}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	data, _ := json.Marshal(File{Addr: ln.Addr().String(), Token: s.token, PID: os.Getpid()})
	if err := writePrivate(s.file, data); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control: write %s: %w", s.file, err)
	}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// writePrivate writes data to name, readable by its user only, replacing
// it atomically.
func writePrivate(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// auth refuses a request without the token.
func (s *Server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(Reply{Error: "refused: the request does not carry the token of " + s.file})
			return
		}
		next(w, r)
	}
}

// Reply is a request's answer.
type Reply struct {
	Path       string `json:"path,omitempty"`
	Checkpoint int64  `json:"checkpoint,omitempty"`
	Error      string `json:"error,omitempty"`
}

func reply(w http.ResponseWriter, rep Reply, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		rep.Error = err.Error()
		w.WriteHeader(http.StatusConflict)
	}
	json.NewEncoder(w).Encode(rep)
}

// Close stops listening once the requests under way are answered (at
// most timeout), and removes the control file if it is still this
// server's.
func (s *Server) Close(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s.srv.Shutdown(ctx)
	<-s.done
	if f, err := Read(filepath.Dir(s.file)); err == nil && f.Token == s.token {
		os.Remove(s.file)
	}
}

// Read reads the control file of checkpoint directory dir.
func Read(dir string) (*File, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no job runs with checkpoint directory %s (it has no %s file)", dir, FileName)
	}
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileName), err)
	}
	return &f, nil
}

// Request sends a request to the job running with checkpoint directory
// dir: op is "savepoint" or "stop", args its form values. It waits for the
// answer (at most timeout).
func Request(dir, op string, args map[string]string, timeout time.Duration) (Reply, error) {
	f, err := Read(dir)
	if err != nil {
		return Reply{}, err
	}
	return send(f, op, args, timeout)
}

func send(f *File, op string, args map[string]string, timeout time.Duration) (Reply, error) {
	form := url.Values{}
	for k, v := range args {
		form.Set(k, v)
	}
	req, err := http.NewRequest("POST", "http://"+f.Addr+"/"+op, strings.NewReader(form.Encode()))
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if f.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.Token)
	}
	c := &http.Client{Timeout: timeout}
	resp, err := c.Do(req)
	if err != nil {
		return Reply{}, fmt.Errorf("the job (pid %d) does not answer at %s: %w", f.PID, f.Addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, err
	}
	var rep Reply
	if err := json.Unmarshal(body, &rep); err != nil {
		return Reply{}, fmt.Errorf("the job answered %s: %q", resp.Status, body)
	}
	if rep.Error != "" {
		return rep, errors.New(rep.Error)
	}
	return rep, nil
}
