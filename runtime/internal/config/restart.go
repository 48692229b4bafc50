package config

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pipegen/pipegen/runtime/catalog"
)

// RestartConfig is the restart strategy: what the program does when a
// subtask fails (a panic in user code, a failed write). The job restarts in
// the same process from its newest checkpoint, after a delay, as long as
// the strategy allows; then the program exits with the failure.
type RestartConfig struct {
	// Strategy is fixed-delay, failure-rate, exponential-backoff or none.
	Strategy string
	// Attempts bounds the restarts of fixed-delay and exponential-backoff
	// (0: no bound).
	Attempts int
	// Delay is the wait before a restart (the first one, for
	// exponential-backoff).
	Delay time.Duration
	// MaxDelay caps exponential-backoff's wait, which grows by Multiplier
	// after every failure.
	MaxDelay   time.Duration
	Multiplier float64
	// MaxFailures within Interval make failure-rate give up (0: never).
	MaxFailures int
	Interval    time.Duration
}

func (c *Config) setRestart(key, value string) error {
	r := &c.Restart
	switch key {
	case "strategy":
		switch value {
		case "fixed-delay", "failure-rate", "exponential-backoff", "none":
			r.Strategy = value
			return nil
		}
		return fmt.Errorf("restart.strategy wants fixed-delay, failure-rate, exponential-backoff or none, got %q", value)
	case "attempts", "max-failures":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return fmt.Errorf("restart.%s wants a whole number >= 0, got %q", key, value)
		}
		if key == "attempts" {
			r.Attempts = n
		} else {
			r.MaxFailures = n
		}
		return nil
	case "delay", "max-delay", "interval":
		d, err := catalog.ParseDuration(value)
		if err != nil {
			return err
		}
		switch key {
		case "delay":
			r.Delay = d
		case "max-delay":
			r.MaxDelay = d
		default:
			r.Interval = d
		}
		return nil
	case "multiplier":
		m, err := strconv.ParseFloat(value, 64)
		if err != nil || m < 1 {
			return fmt.Errorf("restart.multiplier wants a number >= 1, got %q", value)
		}
		r.Multiplier = m
		return nil
	}
	return fmt.Errorf("unknown restart setting %q (there are: strategy, attempts, delay, max-delay, multiplier, max-failures, interval)", key)
}
