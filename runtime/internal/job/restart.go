package job

import (
	"fmt"
	"time"

	"github.com/pipegen/pipegen/runtime/internal/config"
)

// NewRestarter follows the restart strategy cfg.
func NewRestarter(cfg config.RestartConfig) *Restarter { return &Restarter{cfg: cfg} }

// Restarter decides, failure after failure, whether and when to restart.
type Restarter struct {
	cfg      config.RestartConfig
	restarts int
	delay    time.Duration
	failures []time.Time
}

// Next records a failure at now and returns the delay before the restart,
// or false when the strategy gives up, with the reason.
func (r *Restarter) Next(now time.Time) (time.Duration, string, bool) {
	c := r.cfg
	r.restarts++
	switch c.Strategy {
	case "none":
		return 0, "the restart strategy is none", false
	case "fixed-delay":
		if c.Attempts > 0 && r.restarts > c.Attempts {
			return 0, fmt.Sprintf("%d restarts were allowed (restart.attempts)", c.Attempts), false
		}
		return c.Delay, "", true
	case "exponential-backoff":
		if c.Attempts > 0 && r.restarts > c.Attempts {
			return 0, fmt.Sprintf("%d restarts were allowed (restart.attempts)", c.Attempts), false
		}
		if r.delay == 0 {
			r.delay = c.Delay
		} else {
			r.delay = min(time.Duration(float64(r.delay)*c.Multiplier), c.MaxDelay)
		}
		return r.delay, "", true
	case "failure-rate":
		recent := r.failures[:0]
		for _, t := range r.failures {
			if now.Sub(t) < c.Interval {
				recent = append(recent, t)
			}
		}
		r.failures = append(recent, now)
		if c.MaxFailures > 0 && len(r.failures) > c.MaxFailures {
			return 0, fmt.Sprintf("%d failures within %s (restart.max-failures, restart.interval)", len(r.failures), c.Interval), false
		}
		return c.Delay, "", true
	}
	return 0, "unknown restart strategy " + c.Strategy, false
}

// Restarts is the number of restarts so far.
func (r *Restarter) Restarts() int { return r.restarts }

// AttemptsText describes the restart about to happen, for the log.
func (r *Restarter) AttemptsText() string {
	if (r.cfg.Strategy == "fixed-delay" || r.cfg.Strategy == "exponential-backoff") && r.cfg.Attempts > 0 {
		return fmt.Sprintf("restart %d of %d", r.restarts, r.cfg.Attempts)
	}
	return fmt.Sprintf("restart %d", r.restarts)
}
