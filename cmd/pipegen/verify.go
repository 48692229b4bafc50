package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pipegen/pipegen/verify"
)

// errDifferent is verify's failure when the outputs differ; the report on
// standard output says how.
var errDifferent = errors.New("the killed run committed other output than the clean run")

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	opt := verify.Options{Log: stderr}
	fs.IntVar(&opt.Kills, "kills", verify.DefaultKills, "")
	fs.Uint64Var(&opt.Seed, "seed", 0, "")
	fs.IntVar(&opt.Parallelism, "parallelism", 0, "")
	fs.StringVar(&opt.Dir, "o", "", "")
	fs.BoolVar(&opt.KeepInterval, "keep-interval", false, "")
	fs.DurationVar(&opt.Timeout, "timeout", verify.DefaultCleanTimeout, "")
	var sets stringList
	fs.Var(&sets, "set", "")
	path, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case opt.Kills < 1:
		return wrapUsage(fmt.Errorf("-kills wants a whole number of at least 1, got %d", opt.Kills))
	case opt.Parallelism < 0:
		return wrapUsage(fmt.Errorf("-parallelism wants a whole number of at least 1, got %d", opt.Parallelism))
	case opt.Timeout <= 0:
		return wrapUsage(fmt.Errorf("-timeout wants a duration above 0, got %s", opt.Timeout))
	}
	for _, kv := range sets {
		if !strings.Contains(kv, "=") {
			return wrapUsage(fmt.Errorf("-set wants KEY=VALUE, got %q", kv))
		}
	}
	opt.Sets = sets
	if opt.Seed == 0 {
		opt.Seed = uint64(time.Now().UnixNano())
	}
	rep, err := verify.Verify(path, opt)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep)
	if !rep.Identical() {
		return errDifferent
	}
	return nil
}
