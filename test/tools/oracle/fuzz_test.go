package oracle

import (
	"bytes"
	"flag"
	"testing"
	"time"
)

var variants = flag.Bool("variants", false, "also seed FuzzDifferential with every single-line deletion of each valid corpus case")

// FuzzDifferential feeds the same bytes to the kubelet's decode path (Decode,
// the fast stand-in for FileSource) and to podwatch's manifest.Decode and
// fails when their verdicts or pod keys differ. Without -fuzz only the seeds
// run. For a real session:
//
//	go test ./oracle/ -run '^$' -fuzz FuzzDifferential -fuzztime 5m
//	go test ./oracle/ -run FuzzDifferential -variants   # structured seeds only
func FuzzDifferential(f *testing.F) {
	e := loadExpectations(f)
	for _, c := range e.Cases {
		switch {
		case c.Generate != nil:
			// Megabytes per input would starve the mutator; the size
			// limit has its own cases in TestCorpus.
		case c.Divergence != "":
			f.Logf("seed %s left out: declared divergence (%s)", c.File, c.Divergence)
		default:
			data := c.content(f)
			f.Add(data)
			if *variants && c.Verdict == "valid" {
				for _, v := range lineDeletions(data) {
					f.Add(v)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kube := Decode("fuzz.yaml", data, nodeName)
		pw := decodeWithDeadline(data, 10*time.Second)
		if pw.err != nil {
			t.Fatalf("podwatch: %v\ninput: %q", pw.err, data)
		}
		if pw.valid != kube.Valid || (kube.Valid && pw.key != kube.Key) {
			t.Fatalf("verdicts differ\n  kubelet:  %s\n  podwatch: %s\ninput: %q",
				oneLine(describe(kube.Valid, kube.Key, kube.Message), 400), oneLine(pw.describe(), 400), data)
		}
	})
}

// lineDeletions returns data once per line with that line removed: from a
// valid manifest this reaches missing required fields, orphaned list items
// and broken indentation far more often than byte-level mutation does.
func lineDeletions(data []byte) [][]byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out [][]byte
	for i := range lines {
		v := make([]byte, 0, len(data))
		for j, l := range lines {
			if j != i {
				v = append(v, l...)
			}
		}
		out = append(out, v)
	}
	return out
}
