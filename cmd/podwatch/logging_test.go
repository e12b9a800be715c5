package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// client-go logs through klog: those lines must come out of podwatch's own
// logger, in its format.
func TestKlogRoutedThroughSlog(t *testing.T) {
	var buf bytes.Buffer
	f := defaultFlags()
	f.LogFormat = "json"
	log := f.logger(&buf)
	log.Info("from podwatch")
	klog.InfoS("from client-go", "k", "v")
	klog.Flush()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %d:\n%s", len(lines), buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatalf("klog line is not podwatch's JSON: %v: %s", err, lines[1])
	}
	if rec["msg"] != "from client-go" || rec["k"] != "v" {
		t.Fatalf("klog line = %v", rec)
	}
}
