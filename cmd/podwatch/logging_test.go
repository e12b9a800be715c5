package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

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

// Durations in the JSON logs read as the flags take them ("20s"), not as
// integer nanoseconds: top level, in a group, and from client-go's klog.
func TestJSONLogsPrintDurationsAsStrings(t *testing.T) {
	var buf bytes.Buffer
	f := defaultFlags()
	f.LogFormat = "json"
	log := f.logger(&buf)
	log.Info("podwatch starting", "fileCheckFrequency", 20*time.Second, slog.Group("retry", "max", 90*time.Second), "count", 3)
	klog.InfoS("from client-go", "wait", 1500*time.Millisecond)
	klog.Flush()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %d:\n%s", len(lines), buf.String())
	}
	var rec struct {
		FileCheckFrequency any `json:"fileCheckFrequency"`
		Retry              struct {
			Max any `json:"max"`
		} `json:"retry"`
		Count any `json:"count"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.FileCheckFrequency != "20s" || rec.Retry.Max != "1m30s" || rec.Count != float64(3) {
		t.Errorf("podwatch's line: fileCheckFrequency %#v, retry.max %#v, count %#v; want \"20s\", \"1m30s\", 3\n%s",
			rec.FileCheckFrequency, rec.Retry.Max, rec.Count, lines[0])
	}
	var kl map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &kl); err != nil {
		t.Fatal(err)
	}
	if kl["wait"] != "1.5s" {
		t.Errorf("klog's line: wait %#v, want \"1.5s\"\n%s", kl["wait"], lines[1])
	}
}
