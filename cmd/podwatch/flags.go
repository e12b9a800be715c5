package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/podwatch/podwatch/pkg/agent"
)

// flags are the agent command's: the agent's options and how it logs.
type flags struct {
	Agent     agent.Options
	LogFormat string // text (default) or json
	Verbosity int    // 0 info, 1+ debug
}

func defaultFlags() flags {
	f := flags{Agent: agent.DefaultOptions(), LogFormat: "text"}
	// The DaemonSet sets it from the downward API; the state dir's lock
	// names it for a second podwatch to report.
	f.Agent.PodName = os.Getenv("POD_NAME")
	return f
}

func (f *flags) AddFlags(fs *pflag.FlagSet) {
	f.Agent.AddFlags(fs)
	fs.StringVar(&f.LogFormat, "log-format", f.LogFormat, "Format of the logs on stderr: text or json.")
	fs.CountVarP(&f.Verbosity, "verbose", "v", "Log more (debug).")
}

func (f *flags) Validate() error {
	var errs []error
	if err := f.Agent.Validate(); err != nil {
		errs = append(errs, err)
	}
	if f.LogFormat != "text" && f.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", f.LogFormat))
	}
	return errors.Join(errs...)
}

// logger builds the process's logger and routes klog (client-go's logs)
// through it: one stream, one format.
func (f *flags) logger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if f.Verbosity > 0 {
		level = slog.LevelDebug
	}
	hopts := &slog.HandlerOptions{Level: level, ReplaceAttr: durationString}
	var log *slog.Logger
	if f.LogFormat == "json" {
		log = slog.New(slog.NewJSONHandler(w, hopts))
	} else {
		log = slog.New(slog.NewTextHandler(w, hopts))
	}
	klog.SetSlogLogger(log)
	return log
}

// durationString prints a time.Duration as Go's duration string ("20s",
// "1m30s"), the form the flags take, instead of the JSON handler's integer
// nanoseconds, which nobody reads at a glance and which a reader of the
// text logs would not recognise as the same value. The text handler already
// prints that form; doing it in both keeps them alike.
func durationString(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
