package oracle

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/podwatch/podwatch/pkg/manifest"
)

var update = flag.Bool("update", false, "rewrite the kubelet-derived fields of expected.json (verdict, key, kubelet) from the oracle")

// The real file source leaks an inotify instance per run and the default
// per-user limit is 128, so each case goes through it once per test binary
// and the result is shared by the tests below.
var (
	fileSourceMu    sync.Mutex
	fileSourceCache = map[string]fileSourceRun{}
)

type fileSourceRun struct {
	v   Verdict
	err error
}

func fileSourceVerdict(t *testing.T, c *caseSpec) fileSourceRun {
	t.Helper()
	fileSourceMu.Lock()
	defer fileSourceMu.Unlock()
	run, ok := fileSourceCache[c.File]
	if !ok {
		run.v, run.err = FileSource(context.Background(), c.File, c.content(t), Options{NodeName: nodeName})
		fileSourceCache[c.File] = run
	}
	return run
}

// casesForRun loads expected.json; with -update it first brings the list of
// cases in line with the files on disk.
func casesForRun(t *testing.T) *expectations {
	e := loadExpectations(t)
	if !*update {
		checkCoverage(t, e)
		return e
	}
	onDisk := map[string]bool{}
	for _, f := range corpusFiles(t) {
		onDisk[f] = true
	}
	var kept []*caseSpec
	for _, c := range e.Cases {
		if c.Generate != nil || onDisk[c.File] {
			kept = append(kept, c)
			delete(onDisk, c.File)
		}
	}
	for f := range onDisk {
		kept = append(kept, &caseSpec{File: f})
	}
	e.Cases = kept
	return e
}

// TestCorpus runs every corpus case through the kubelet's real file source,
// checks the result against expected.json, and then checks that podwatch's
// manifest.Decode reaches the same verdict. Disagreements are collected into
// one table so a decoder change shows its whole effect at once.
func TestCorpus(t *testing.T) {
	e := casesForRun(t)

	var rows []divergenceRow
	for _, c := range e.Cases {
		run := fileSourceVerdict(t, c)
		if run.err != nil {
			t.Errorf("%s: oracle: %v", c.File, run.err)
			continue
		}
		kube := run.v
		if *update {
			c.Verdict, c.Key, c.Kubelet = verdictWord(kube.Valid), kube.Key, ""
			if !kube.Valid {
				c.Kubelet = abridge(kube.Message)
			}
		}
		t.Run(c.File+"/kubelet", func(t *testing.T) { checkKubelet(t, c, kube) })

		pw := decodeWithDeadline(c.content(t), 20*time.Second)
		row := divergenceRow{file: c.File, kubelet: describe(kube.Valid, kube.Key, kube.Message), podwatch: pw.describe(), declared: c.Divergence}
		agree := pw.err == nil && pw.valid == kube.Valid && (!kube.Valid || pw.key == kube.Key)
		t.Run(c.File+"/podwatch", func(t *testing.T) {
			switch {
			case pw.err != nil:
				t.Errorf("podwatch: %v", pw.err)
			case agree && c.Divergence != "":
				t.Errorf("declared divergence (%s) no longer happens: podwatch agrees with the kubelet; drop it from %s", c.Divergence, expectedFile)
			case agree:
			case c.Divergence == "":
				t.Errorf("undeclared divergence: kubelet %s; podwatch %s", row.kubelet, row.podwatch)
			default:
				t.Logf("declared divergence (%s): kubelet %s; podwatch %s", c.Divergence, row.kubelet, row.podwatch)
			}
		})
		if !agree {
			rows = append(rows, row)
		}
	}
	if *update {
		if err := e.save(); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", expectedFile)
	}
	if len(rows) > 0 {
		t.Logf("podwatch disagrees with the kubelet on %d of %d cases:\n%s", len(rows), len(e.Cases), divergenceTable(rows))
	}
}

func checkKubelet(t *testing.T, c *caseSpec, kube Verdict) {
	if c.About == "" {
		t.Errorf("%s needs an about line saying what the case is for", expectedFile)
	}
	if got := verdictWord(kube.Valid); got != c.Verdict {
		t.Fatalf("kubelet says %s (%s), %s says %s", got, describe(kube.Valid, kube.Key, kube.Message), expectedFile, c.Verdict)
	}
	if kube.Valid {
		if kube.Key != c.Key {
			t.Errorf("kubelet key %q, %s says %q", kube.Key, expectedFile, c.Key)
		}
		if c.Match != "" || c.MatchKubelet != "" {
			t.Errorf("match is for invalid cases only")
		}
		return
	}
	want := c.MatchKubelet
	if want == "" {
		want = c.Match
	}
	if c.Match == "" {
		t.Errorf("invalid case needs a match substring in %s; kubelet said: %s", expectedFile, kube.Message)
	} else if !containsFold(kube.Message, want) {
		t.Errorf("kubelet message lacks %q: %s", want, kube.Message)
	}
}

type podwatchResult struct {
	valid bool
	key   string
	msg   string
	err   error // podwatch misbehaved: panic, hang, or an error of the wrong type
}

func (r podwatchResult) describe() string {
	if r.err != nil {
		return "ERROR " + r.err.Error()
	}
	return describe(r.valid, r.key, r.msg)
}

// decodeWithDeadline keeps one hanging or panicking decode (an alias bomb,
// say) from taking the rest of the table down with it.
func decodeWithDeadline(data []byte, d time.Duration) podwatchResult {
	done := make(chan podwatchResult, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- podwatchResult{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		pod, err := manifest.Decode(data, manifest.Options{NodeName: nodeName})
		switch {
		case err != nil:
			var me *manifest.Error
			if !errors.As(err, &me) {
				done <- podwatchResult{err: fmt.Errorf("error is not a *manifest.Error: %v", err)}
				return
			}
			done <- podwatchResult{msg: err.Error()}
		case pod == nil:
			done <- podwatchResult{err: errors.New("nil pod and nil error")}
		default:
			done <- podwatchResult{valid: true, key: pod.Key}
		}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-done:
		return r
	case <-timer.C:
		return podwatchResult{err: fmt.Errorf("Decode did not return within %v", d)}
	}
}

type divergenceRow struct{ file, kubelet, podwatch, declared string }

func divergenceTable(rows []divergenceRow) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tKUBELET\tPODWATCH\tDECLARED")
	for _, r := range rows {
		declared := "-"
		if r.declared != "" {
			declared = r.declared
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.file, oneLine(r.kubelet, 70), oneLine(r.podwatch, 70), declared)
	}
	tw.Flush()
	return b.String()
}

// TestDecodeMatchesFileSource keeps Decode, the fuzzing shortcut, honest: on
// every corpus case it must say exactly what the real file source says.
func TestDecodeMatchesFileSource(t *testing.T) {
	e := loadExpectations(t)
	for _, c := range e.Cases {
		run := fileSourceVerdict(t, c)
		if run.err != nil {
			t.Errorf("%s: oracle: %v", c.File, run.err)
			continue
		}
		got := Decode(c.File, c.content(t), nodeName)
		want := run.v
		if got.Valid != want.Valid || got.Key != want.Key || normalize(got.Message) != normalize(want.Message) {
			t.Errorf("%s:\n  Decode:     %s\n  FileSource: %s", c.File,
				describe(got.Valid, got.Key, got.Message), describe(want.Valid, want.Key, want.Message))
			continue
		}
		// The UID is what the edit-pair oracle compares: it must be the
		// file source's own.
		if want.Valid {
			at := DecodeAt(c.File, want.Path, c.content(t), nodeName)
			if at.Pod.UID != want.Pod.UID {
				t.Errorf("%s: Decode's UID %s, the file source's %s", c.File, at.Pod.UID, want.Pod.UID)
			}
		}
	}
}
