package kubeletconfig

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	fromFile := Config{File: "/var/lib/kubelet/config.yaml", StaticPodPath: "/srv/pods", FileCheckFrequency: 7 * time.Second}
	disabled := Config{File: "/var/lib/kubelet/config.yaml", FileCheckFrequency: 9 * time.Second}
	const flagPath, flagFreq = "/flag/path", 3 * time.Second
	tests := []struct {
		name     string
		cfg      Config
		changed  []string
		wantPath string
		wantFreq time.Duration
		wantErr  error
	}{
		{"file wins over defaults", fromFile, nil, "/srv/pods", 7 * time.Second, nil},
		{"explicit --path wins", fromFile, []string{FlagPath}, flagPath, 7 * time.Second, nil},
		{"explicit --file-check-frequency wins", fromFile, []string{FlagFileCheckFrequency}, "/srv/pods", flagFreq, nil},
		{"both flags win", fromFile, []string{FlagPath, FlagFileCheckFrequency}, flagPath, flagFreq, nil},
		{"unrelated flag changes nothing", fromFile, []string{"node-name"}, "/srv/pods", 7 * time.Second, nil},
		{"static pods off, no --path", disabled, nil, flagPath, 9 * time.Second, ErrStaticPodsDisabled},
		{"static pods off, explicit --path", disabled, []string{FlagPath}, flagPath, 9 * time.Second, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := map[string]bool{}
			for _, f := range tt.changed {
				changed[f] = true
			}
			path, freq := flagPath, flagFreq
			err := Apply(tt.cfg, func(f string) bool { return changed[f] }, &path, &freq)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Apply error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.cfg.File) {
				t.Errorf("Apply error %q does not name %s", err, tt.cfg.File)
			}
			if path != tt.wantPath || freq != tt.wantFreq {
				t.Errorf("Apply set path %q, freq %v; want %q, %v", path, freq, tt.wantPath, tt.wantFreq)
			}
		})
	}
}
