package follow

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Defaults of Options. The deadline leaves the kubelet time to pull a
// control-plane image on a slow link; kubeadm waits minutes too before it
// calls an upgraded static pod failed.
const (
	DefaultDeadline         = 3 * time.Minute
	DefaultPollInterval     = time.Second
	DefaultIdlePollInterval = 10 * time.Second
	// DefaultMinRunning is long enough for a container that fails at start
	// (a bad flag, a missing file) to be seen exited, short beside a
	// control-plane restart.
	DefaultMinRunning = 5 * time.Second
)

// Options tune a Follower. Zero values take the defaults above.
type Options struct {
	// Deadline is how long after a change the pod may take to run it (or
	// to stop, for a REMOVE) before StaticPodNotStarted; the warning is
	// repeated every Deadline while it lasts.
	Deadline time.Duration
	// PollInterval is how often the runtime is read while a change is
	// followed and its deadline has not passed.
	PollInterval time.Duration
	// IdlePollInterval is how often it is read otherwise: to see restarts
	// with no manifest change, and a pod that runs after all.
	IdlePollInterval time.Duration
	// MinRunning is how long a new container must have been running before
	// the pod counts as running the change: one seen running once and
	// crashing a second later did not start it. Zero: seen running once is
	// enough. The agent's default is DefaultMinRunning.
	MinRunning time.Duration
}

// AddFlags registers the follower's flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Deadline, "follow-deadline", or(o.Deadline, DefaultDeadline), "How long after a change the kubelet may take to run the new pod (or stop a removed one) before StaticPodNotStarted (StaticPodNotStopped), which is repeated every --follow-deadline while it lasts.")
	fs.DurationVar(&o.PollInterval, "follow-poll-interval", or(o.PollInterval, DefaultPollInterval), "How often the container runtime is read while a change is followed.")
	fs.DurationVar(&o.MinRunning, "follow-min-running", o.MinRunning, "How long a new container must have been running before StaticPodStarted, so that one crashing just after it starts is not reported started; 0: running once is enough.")
	fs.DurationVar(&o.IdlePollInterval, "follow-idle-poll-interval", or(o.IdlePollInterval, DefaultIdlePollInterval), "How often the container runtime is read when no change is followed, to see container restarts with no manifest change.")
}

// Validate reports every option that is wrong.
func (o *Options) Validate() error {
	var errs []error
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--follow-deadline", o.Deadline}, {"--follow-poll-interval", o.PollInterval}, {"--follow-idle-poll-interval", o.IdlePollInterval}, {"--follow-min-running", o.MinRunning}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %v", d.flag, d.v))
		}
	}
	if p, i := or(o.PollInterval, DefaultPollInterval), or(o.IdlePollInterval, DefaultIdlePollInterval); p > i {
		errs = append(errs, fmt.Errorf("--follow-poll-interval %v is longer than --follow-idle-poll-interval %v", p, i))
	}
	if p, d := or(o.PollInterval, DefaultPollInterval), or(o.Deadline, DefaultDeadline); p > d {
		errs = append(errs, fmt.Errorf("--follow-poll-interval %v is longer than --follow-deadline %v", p, d))
	}
	if m, d := o.MinRunning, or(o.Deadline, DefaultDeadline); m >= d {
		errs = append(errs, fmt.Errorf("--follow-min-running %v is not shorter than --follow-deadline %v: no pod could start in time", m, d))
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	o.Deadline = or(o.Deadline, DefaultDeadline)
	o.PollInterval = or(o.PollInterval, DefaultPollInterval)
	o.IdlePollInterval = or(o.IdlePollInterval, DefaultIdlePollInterval)
	return o
}

func or(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}
