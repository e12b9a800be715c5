package relist

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Defaults. The kubelet reads a folder of a few manifests in well under a
// millisecond per file and lists on a ticker, so both bounds are loose
// for it and tight for anything that merely looks alike.
const (
	// DefaultWindow is the longest gap between two opens of one relist:
	// the folder's and the first file's, or two files' in a row.
	DefaultWindow = 100 * time.Millisecond
	// DefaultTolerance is how far a relist may lie from its phase's grid.
	DefaultTolerance = 100 * time.Millisecond
)

// Options configure a Detector. The zero value is off; DefaultOptions
// turns it on. Zero durations take the defaults.
type Options struct {
	// Enabled runs the detector. Default true (DefaultOptions).
	Enabled bool
	// Path is the manifest folder, as the file source's --path; the agent
	// sets it. A single-file path has no relist to recognise.
	Path string
	// Window is the longest gap between two opens of one relist. Default
	// DefaultWindow.
	Window time.Duration
	// Tolerance is how far a relist may lie from the grid of its period
	// and still count as on it. Default DefaultTolerance.
	Tolerance time.Duration
	// OwnListPeriod is the period of podwatch's own file source on Path,
	// when one runs beside the detector (the agent sets it; no flag). Its
	// lists re-read every file written within OwnRereadWindow before, so
	// a full read in which every file is younger than the two together
	// may be its own, and is not taken for a relist. 0: no source of
	// podwatch's reads the folder.
	OwnListPeriod time.Duration
	// KubeletPeriod is the kubelet's fileCheckFrequency as podwatch is
	// told it (the agent sets it; no flag): its relists tick at exactly
	// that period, so only reads at it, or at a whole number of it (ticks
	// a held-up file source missed), make a phase. Reads at another
	// period are another reader's, or a held-up kubelet's at no period at
	// all; taken for the phase, they would hold back what only a relist
	// does until they stop. 0: any period.
	KubeletPeriod time.Duration
	// OwnLists, when set (the agent sets it; no flag), says when that
	// source last began a list, so that only a full read that opened the
	// folder just after one (within OwnListLag) may be its own. Nil: any
	// full read of young files may be.
	OwnLists OwnLists
}

// OwnLists is podwatch's own file source, as the detector asks it.
type OwnLists interface {
	// ListStarted is when the source last began a list (zero before one).
	ListStarted() time.Time
}

// OwnListLag is how long after podwatch's own list began a full read may
// have opened the folder and still be taken for that list: its open comes
// at once, but the detector reads it late on a loaded machine.
const OwnListLag = 500 * time.Millisecond

// OwnRereadWindow is how long after a file's last write podwatch's file
// source re-reads it at every list, whether or not its stat changed: file
// times are too coarse to trust sooner.
const OwnRereadWindow = 2 * time.Second

// DefaultOptions are on, with the default window and tolerance.
func DefaultOptions() Options {
	return Options{Enabled: true, Window: DefaultWindow, Tolerance: DefaultTolerance}
}

// AddFlags registers --kubelet-relist-detection, --kubelet-relist-window
// and --kubelet-relist-tolerance, with the current values as defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.setDefaults()
	fs.BoolVar(&o.Enabled, "kubelet-relist-detection", o.Enabled,
		"Recognise the kubelet's periodic relist of --path by the opens it makes (a separate inotify instance), to learn when the kubelet next acts on a change.")
	fs.DurationVar(&o.Window, "kubelet-relist-window", o.Window,
		"Longest gap between two opens of one kubelet relist (the folder, then every manifest file in name order); 0 means the default.")
	fs.DurationVar(&o.Tolerance, "kubelet-relist-tolerance", o.Tolerance,
		"How far a relist may lie from its period's grid and still count as on it; 0 means the default.")
}

// Validate reports the options New would reject, but for Path, which the
// agent takes from the file source.
func (o Options) Validate() error {
	var errs []error
	if o.Window < 0 {
		errs = append(errs, fmt.Errorf("--kubelet-relist-window must not be negative (0 means the default, %v), got %v", DefaultWindow, o.Window))
	}
	if o.Tolerance < 0 {
		errs = append(errs, fmt.Errorf("--kubelet-relist-tolerance must not be negative (0 means the default, %v), got %v", DefaultTolerance, o.Tolerance))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	o.Tolerance = o.EffectiveTolerance()
}

// EffectiveTolerance is the tolerance a Detector works with: 0 takes the
// default. The agent compares the period seen with --file-check-frequency
// within it.
func (o Options) EffectiveTolerance() time.Duration {
	if o.Tolerance == 0 {
		return DefaultTolerance
	}
	return o.Tolerance
}
