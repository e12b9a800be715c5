package file

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/types"

	"github.com/spf13/pflag"
)

func TestAddFlagsDefaultsAndParse(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if o.Path != DefaultPath || o.FileCheckFrequency != DefaultFileCheckFrequency || o.SettleDelay != DefaultSettleDelay {
		t.Fatalf("defaults after AddFlags = %+v", o)
	}
	if fs.Lookup("node-name") != nil {
		t.Error("--node-name is registered; main owns it")
	}
	err := fs.Parse([]string{"--path=/srv/m/", "--file-check-frequency=5s", "--settle-delay=250ms"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Path != "/srv/m/" || o.FileCheckFrequency != 5*time.Second || o.SettleDelay != 250*time.Millisecond {
		t.Fatalf("parsed = %+v", o)
	}
}

// 0 is the default settle delay, as for the other zero values; the agent
// passes this value on to the diff.
func TestEffectiveSettleDelay(t *testing.T) {
	if got := (Options{}).EffectiveSettleDelay(); got != DefaultSettleDelay {
		t.Errorf("0 = %v, want %v", got, DefaultSettleDelay)
	}
	if got := (Options{SettleDelay: 250 * time.Millisecond}).EffectiveSettleDelay(); got != 250*time.Millisecond {
		t.Errorf("250ms = %v", got)
	}
}

func TestValidate(t *testing.T) {
	ok := Options{NodeName: "n"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("zero values with a node name: %v", err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no node", Options{}, "node name"},
		{"negative frequency", Options{NodeName: "n", FileCheckFrequency: -time.Second}, "file-check-frequency"},
		{"negative settle", Options{NodeName: "n", SettleDelay: -time.Second}, "settle-delay"},
		{"NUL in path", Options{NodeName: "n", Path: "/a\x00b"}, "NUL"},
	} {
		err := tc.o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error about %q", tc.name, err, tc.want)
		}
		if _, err := New(tc.o, nil, nil); err == nil {
			t.Errorf("%s: New accepted invalid options", tc.name)
		}
	}
}

func TestNewTrimsTrailingSlashesAndAppliesDefaults(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Path: dir + "///", NodeName: testNode}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Options()
	if got.Path != dir || s.path != dir {
		t.Errorf("path = %q, want %q", got.Path, dir)
	}
	if got.FileCheckFrequency != DefaultFileCheckFrequency || got.SettleDelay != DefaultSettleDelay {
		t.Errorf("defaults not applied: %+v", got)
	}
	if cleanPath("/") != "/" || cleanPath("///") != "/" {
		t.Errorf("the root path must stay /")
	}
}

func TestRunTwiceAtOnceIsRefused(t *testing.T) {
	s := newTestSource(t, t.TempDir(), nil)
	h := start(t, s)
	h.next()
	if err := s.Run(context.Background(), make(chan types.Snapshot)); err == nil {
		t.Fatal("second concurrent Run returned nil")
	}
}
