package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/source/file"
)

// DefaultStateDir is where podwatch keeps its state on a node.
const DefaultStateDir = "/var/lib/podwatch"

// options are the agent's flags.
type options struct {
	Source    file.Options
	NodeName  string // default $NODE_NAME, then the lowercased hostname
	Output    string // text (default) or json
	StateDir  string // default /var/lib/podwatch
	LogFormat string // text (default) or json
	Verbosity int    // 0 info, 1+ debug
}

func defaultOptions() options {
	return options{
		Source:    file.Options{},
		NodeName:  defaultNodeName(),
		Output:    events.OutputText,
		StateDir:  DefaultStateDir,
		LogFormat: "text",
	}
}

func defaultNodeName() string {
	if n := os.Getenv("NODE_NAME"); n != "" {
		return n
	}
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return strings.ToLower(h)
}

func (o *options) AddFlags(fs *pflag.FlagSet) {
	o.Source.AddFlags(fs)
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "name of this node, appended to static pod names as the kubelet does (default $NODE_NAME, then the lowercased hostname)")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "format of the events printed on stdout: text or json (one v1 Event per line)")
	fs.StringVar(&o.StateDir, "state-dir", o.StateDir, "folder for podwatch's state (published pods, event store)")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "format of the logs on stderr: text or json")
	fs.CountVarP(&o.Verbosity, "verbose", "v", "log more (repeat for more)")
}

func (o *options) Validate() error {
	var errs []error
	src := o.Source
	src.NodeName = o.NodeName
	if err := src.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name is empty and neither $NODE_NAME nor the hostname gave one"))
	}
	if o.Output != events.OutputText && o.Output != events.OutputJSON {
		errs = append(errs, fmt.Errorf("--output %q: want text or json", o.Output))
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", o.LogFormat))
	}
	if o.StateDir == "" {
		errs = append(errs, errors.New("--state-dir is empty"))
	}
	return errors.Join(errs...)
}

func (o *options) logger(w *os.File) *slog.Logger {
	level := slog.LevelInfo
	if o.Verbosity > 0 {
		level = slog.LevelDebug
	}
	hopts := &slog.HandlerOptions{Level: level}
	if o.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts))
	}
	return slog.New(slog.NewTextHandler(w, hopts))
}
