package events

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestFlagsShowDefaultsAndParse(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	o.AddFlags(fs)
	for flag, want := range map[string]string{
		"event-cache-size": "4096", "event-ttl": "1h0m0s", "event-aggregate-max": "10",
		"event-aggregate-interval": "10m0s", "event-key-interval": "1m0s", "event-qps": "5",
		"event-burst": "25", "event-pending-max": "4096", "event-retry-initial": "1s", "event-retry-max": "1m0s",
		"event-write-timeout": "10s", "event-text-repeat-interval": "10m0s",
	} {
		f := fs.Lookup(flag)
		if f == nil || f.DefValue != want {
			t.Errorf("--%s default = %v, want %s", flag, f, want)
		}
	}
	if err := fs.Parse([]string{"--event-qps=0.5", "--event-key-interval=30s", "--event-aggregate-max=-1"}); err != nil {
		t.Fatal(err)
	}
	if o.QPS != 0.5 || o.KeyInterval != 30*time.Second || o.AggregateMax != -1 {
		t.Fatalf("parsed %+v", o)
	}
}

func TestValidate(t *testing.T) {
	if err := (Options{Host: "n"}).Validate(); err != nil {
		t.Fatalf("zero options with a host: %v", err)
	}
	bad := Options{Host: "", TTL: -1, QPS: -1, Burst: -1, PendingMax: -1, CacheSize: -1, AggregateMax: 1, KeyInterval: -1, RetryJitter: 1.5}
	err := bad.Validate()
	if err == nil {
		t.Fatal("bad options accepted")
	}
	for _, want := range []string{"host", "--event-ttl", "--event-qps", "--event-burst", "--event-pending-max", "--event-cache-size", "--event-aggregate-max", "--event-key-interval", "--event-retry-jitter"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}
