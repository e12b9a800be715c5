package kubeletconfig

import (
	"fmt"
	"time"
)

// Apply sets *path and *freq from cfg unless the user gave the flag for it:
// an explicit flag is a deliberate override, while a flag left at its default
// would silently point podwatch somewhere the kubelet is not looking.
// changed reports whether a flag (FlagPath, FlagFileCheckFrequency) was set on
// the command line; pflag's (*FlagSet).Changed fits.
//
// When the file turns static pods off and --path was not given, *path is left
// alone and the error wraps ErrStaticPodsDisabled: podwatch's default path
// would be a folder the kubelet ignores, so the caller must decide (say so
// and idle, or exit). *freq is still applied.
func Apply(cfg Config, changed func(flag string) bool, path *string, freq *time.Duration) error {
	if !changed(FlagFileCheckFrequency) {
		*freq = cfg.FileCheckFrequency
	}
	if changed(FlagPath) {
		return nil
	}
	if cfg.StaticPodsDisabled() {
		return fmt.Errorf("%w (%s)", ErrStaticPodsDisabled, cfg.File)
	}
	*path = cfg.StaticPodPath
	return nil
}
