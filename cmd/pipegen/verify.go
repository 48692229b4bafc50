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

func verifyFlags(fs *flag.FlagSet) func(*flag.FlagSet, io.Writer, io.Writer) error {
	var opt verify.Options
	fs.IntVar(&opt.Kills, "kills", verify.DefaultKills, "kill the program `N` times at random moments")
	fs.Uint64Var(&opt.Seed, "seed", 0, "draw the kill moments from seed `S`, to replay a failure (default: from the clock)")
	fs.IntVar(&opt.Parallelism, "parallelism", 0, "run the program with --parallelism `P` (default: the pipeline's)")
	fs.StringVar(&opt.Dir, "o", "", "build and run in `DIR`, and keep it (default: a temporary directory, removed when the check passes)")
	fs.BoolVar(&opt.KeepInterval, "keep-interval", false, "keep the pipeline's checkpoint interval (default: a third of the mean time between two kills)")
	fs.DurationVar(&opt.Timeout, "timeout", verify.DefaultCleanTimeout, "bound the clean run to `D`")
	var sets stringList
	fs.Var(&sets, "set", "pass --set `KEY=VALUE` to every run (repeated)")
	return func(fs *flag.FlagSet, stdout, stderr io.Writer) error {
		opt.Log = stderr
		path, err := pipelineArg(fs)
		if err != nil {
			return err
		}
		return runVerify(path, opt, sets, stdout)
	}
}

func runVerify(path string, opt verify.Options, sets stringList, stdout io.Writer) error {
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
