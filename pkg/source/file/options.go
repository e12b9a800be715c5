package file

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Defaults, as in the kubelet (--pod-manifest-path is conventionally
// /etc/kubernetes/manifests; --file-check-frequency defaults to 20s).
const (
	DefaultPath               = "/etc/kubernetes/manifests"
	DefaultFileCheckFrequency = 20 * time.Second
	DefaultSettleDelay        = 1 * time.Second
)

// Options configure a Source. Zero values take the defaults above.
type Options struct {
	// Path is a directory of manifests or a single manifest file. Trailing
	// slashes are ignored. Default DefaultPath.
	Path string
	// NodeName is passed to manifest.Decode; it is required. main owns the
	// flag for it.
	NodeName string
	// FileCheckFrequency is how often the path is listed in full, watch or
	// not. Default DefaultFileCheckFrequency.
	FileCheckFrequency time.Duration
	// SettleDelay is how long a file that was not seen complete (closed after
	// writing or moved into place) must stay quiet before its content counts.
	// The source only reports ChangedAt and Complete; pkg/diff waits, and
	// holds bad news back for as long. Default DefaultSettleDelay, also for
	// 0 (see EffectiveSettleDelay); negative is invalid.
	SettleDelay time.Duration
}

// AddFlags registers --path, --file-check-frequency and --settle-delay on fs,
// with the current values (or the defaults for zero values) as defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.setDefaults()
	fs.StringVar(&o.Path, "path", o.Path,
		"Directory of static pod manifests, or a single manifest file, as the kubelet's --pod-manifest-path.")
	fs.DurationVar(&o.FileCheckFrequency, "file-check-frequency", o.FileCheckFrequency,
		"How often to list --path in full, as the kubelet's --file-check-frequency; the kubelet's relist is recognised at this period only; 0 means the default, as it does for the kubelet.")
	fs.DurationVar(&o.SettleDelay, "settle-delay", o.SettleDelay,
		"How long bad news (REMOVE, InvalidManifest, DuplicatePod) must persist before it is reported, and a file written in place must stay unchanged before its content is trusted; 0 means the default.")
}

// Validate reports options New would reject. Zero values are valid: they mean
// the defaults.
func (o Options) Validate() error {
	var errs []error
	if strings.ContainsRune(o.Path, 0) {
		errs = append(errs, errors.New("--path contains a NUL byte"))
	}
	if o.NodeName == "" {
		errs = append(errs, errors.New("node name is required"))
	}
	if o.FileCheckFrequency < 0 {
		errs = append(errs, fmt.Errorf("--file-check-frequency must not be negative (0 means the default, %v), got %v", DefaultFileCheckFrequency, o.FileCheckFrequency))
	}
	if o.SettleDelay < 0 {
		errs = append(errs, fmt.Errorf("--settle-delay must not be negative, got %v", o.SettleDelay))
	}
	return errors.Join(errs...)
}

func (o *Options) setDefaults() {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	o.FileCheckFrequency = o.EffectiveFileCheckFrequency()
	o.SettleDelay = o.EffectiveSettleDelay()
}

// EffectiveSettleDelay is the settle delay a Source works with: 0 takes the
// default, as the Options' zero values do. The agent hands this to pkg/diff
// and logs it, so that the file source, the diff and the start log agree on
// one value (pkg/diff alone would take 0 as no delay at all).
func (o Options) EffectiveSettleDelay() time.Duration {
	if o.SettleDelay == 0 {
		return DefaultSettleDelay
	}
	return o.SettleDelay
}

// EffectiveFileCheckFrequency is the period a Source lists at: 0 takes the
// default, as the kubelet's config defaulting turns a 0 fileCheckFrequency
// into 20s. Callers that report the period use this, not the raw option, so
// they say what the Source does.
func (o Options) EffectiveFileCheckFrequency() time.Duration {
	if o.FileCheckFrequency == 0 {
		return DefaultFileCheckFrequency
	}
	return o.FileCheckFrequency
}

// cleanPath trims trailing separators as the kubelet does, keeping "/" itself.
func cleanPath(p string) string {
	sep := string(os.PathSeparator)
	if t := strings.TrimRight(p, sep); t != "" {
		return t
	}
	return sep
}
