package control

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

type fakeJob struct {
	savepoints, stops atomic.Int32
	dir               atomic.Value
}

func (f *fakeJob) Savepoint(_ context.Context, dir string, stop, drain bool) (string, int64, error) {
	f.savepoints.Add(1)
	f.dir.Store(dir)
	if stop {
		return "", 0, errors.New("cannot stop")
	}
	return "/sp/savepoint-000007-abcd", 7, nil
}

func (f *fakeJob) Stop() error { f.stops.Add(1); return nil }

// TestTokenRequired: a request without the token, or with another one,
// is refused and reaches nothing; with it, the job is asked. The control
// file is readable by its user only.
func TestTokenRequired(t *testing.T) {
	dir := t.TempDir()
	job := &fakeJob{}
	s, err := Serve(dir, job)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(time.Second)
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("control file mode %v, want 0600", fi.Mode().Perm())
	}
	f, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Addr, "127.0.0.1:") || len(f.Token) != 64 {
		t.Errorf("control file %+v: want an address on 127.0.0.1 and a 64-digit token", f)
	}
	for _, token := range []string{"", "wrong", f.Token[:63] + "x", f.Token + "0"} {
		bad := *f
		bad.Token = token
		for _, op := range []string{"savepoint", "stop"} {
			_, err := send(&bad, op, nil, 5*time.Second)
			if err == nil || !strings.Contains(err.Error(), "refused: the request does not carry the token") {
				t.Errorf("%s with token %q: %v, want it refused", op, token, err)
			}
		}
	}
	if job.savepoints.Load() != 0 || job.stops.Load() != 0 {
		t.Fatalf("refused requests reached the job: %d savepoints, %d stops", job.savepoints.Load(), job.stops.Load())
	}
	rep, err := Request(dir, "savepoint", map[string]string{"dir": "/a b&c"}, 5*time.Second)
	if err != nil || rep.Path != "/sp/savepoint-000007-abcd" || rep.Checkpoint != 7 || job.dir.Load() != "/a b&c" {
		t.Errorf("savepoint = %+v, %v (dir %v)", rep, err, job.dir.Load())
	}
	if _, err := Request(dir, "savepoint", map[string]string{"stop": "1"}, 5*time.Second); err == nil || err.Error() != "cannot stop" {
		t.Errorf("a failed savepoint: %v, want its error", err)
	}
	if _, err := Request(dir, "stop", nil, 5*time.Second); err != nil || job.stops.Load() != 1 {
		t.Errorf("stop: %v, %d stops", err, job.stops.Load())
	}
	s.Close(time.Second)
	if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Errorf("control file left after Close: %v", err)
	}
	if _, err := Request(dir, "stop", nil, time.Second); err == nil || !strings.Contains(err.Error(), "no job runs") {
		t.Errorf("request to a stopped job: %v", err)
	}
}
