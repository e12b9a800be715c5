package manifest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/manifest"
)

// The corpus's verdicts come from the kubelet itself: test/tools/oracle runs
// each file through the kubelet's file source and rewrites the kubelet-derived
// fields with -update. This test holds podwatch to them without importing
// kubernetes.
const corpusDir = "testdata/corpus"

type corpusExpectations struct {
	Node  string        `json:"node"`
	Cases []*corpusCase `json:"cases"`
}

// corpusCase mirrors the oracle's schema; see test/tools/oracle for the
// meaning of each field.
type corpusCase struct {
	File     string `json:"file"`
	About    string `json:"about"`
	Generate *struct {
		From string `json:"from"`
		Size int    `json:"size"`
	} `json:"generate,omitempty"`
	Verdict         string `json:"verdict"`
	Key             string `json:"key,omitempty"`
	Kubelet         string `json:"kubelet,omitempty"`
	Match           string `json:"match,omitempty"`
	MatchKubelet    string `json:"match_kubelet,omitempty"`
	Ignored         bool   `json:"ignored,omitempty"`
	NotEchoed       string `json:"not_echoed,omitempty"`
	SameHashAs      string `json:"same_hash_as,omitempty"`
	Divergence      string `json:"divergence,omitempty"`
	PodwatchVerdict string `json:"podwatch_verdict,omitempty"`
	PodwatchKey     string `json:"podwatch_key,omitempty"`
}

func loadCorpus(t *testing.T) *corpusExpectations {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(corpusDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e corpusExpectations
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	return &e
}

// content pads a generated case exactly as the oracle does, so both sides
// judge the same bytes.
func (c *corpusCase) content(t *testing.T) []byte {
	t.Helper()
	if c.Generate == nil {
		b, err := os.ReadFile(filepath.Join(corpusDir, c.File))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	base, err := os.ReadFile(filepath.Join(corpusDir, c.Generate.From))
	if err != nil {
		t.Fatal(err)
	}
	pad := c.Generate.Size - len(base) - len("#\n")
	if pad < 0 {
		t.Fatalf("size %d is smaller than %s", c.Generate.Size, c.Generate.From)
	}
	out := make([]byte, 0, c.Generate.Size)
	out = append(out, base...)
	out = append(out, '#')
	out = append(out, bytes.Repeat([]byte{'x'}, pad)...)
	return append(out, '\n')
}

func TestCorpusCoverage(t *testing.T) {
	e := loadCorpus(t)
	listed := map[string]bool{}
	for _, c := range e.Cases {
		if listed[c.File] {
			t.Errorf("%s listed twice", c.File)
		}
		listed[c.File] = true
	}
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		if d.Name() != "expected.json" && !listed[d.Name()] {
			t.Errorf("%s has no entry in expected.json: run the oracle with -update in test/tools", d.Name())
		}
	}
}

func TestCorpus(t *testing.T) {
	e := loadCorpus(t)
	opts := manifest.Options{NodeName: e.Node}
	byFile := map[string]*corpusCase{}
	for _, c := range e.Cases {
		byFile[c.File] = c
	}
	for _, c := range e.Cases {
		t.Run(c.File, func(t *testing.T) {
			wantVerdict, wantKey := c.Verdict, c.Key
			if c.Divergence != "" {
				if c.PodwatchVerdict == "" {
					t.Fatalf("divergence %q declared without podwatch_verdict", c.Divergence)
				}
				wantVerdict, wantKey = c.PodwatchVerdict, c.PodwatchKey
				t.Logf("deliberate divergence from the kubelet: %s", c.Divergence)
			}
			data := c.content(t)
			pod, err := manifest.Decode(data, opts)

			switch wantVerdict {
			case "valid":
				if err != nil {
					t.Fatalf("Decode: %v; the kubelet accepts this file (%s)", err, c.About)
				}
				if pod.Key != wantKey {
					t.Errorf("Key = %q, want %q", pod.Key, wantKey)
				}
				if got := len(pod.Ignored) > 0; got != c.Ignored {
					t.Errorf("reports ignored content = %v (%v), want %v", got, pod.Ignored, c.Ignored)
				}
				if c.SameHashAs != "" {
					other := byFile[c.SameHashAs]
					if other == nil {
						t.Fatalf("same_hash_as names unknown case %s", c.SameHashAs)
					}
					op, err := manifest.Decode(other.content(t), opts)
					if err != nil {
						t.Fatalf("Decode %s: %v", c.SameHashAs, err)
					}
					if op.Hash != pod.Hash {
						t.Errorf("Hash %s differs from %s's %s", pod.Hash, c.SameHashAs, op.Hash)
					}
				}
			case "invalid":
				if err == nil {
					t.Fatalf("Decode accepted %s as %s; the kubelet rejects it: %s", c.About, pod.Key, c.Kubelet)
				}
				var me *manifest.Error
				if !errors.As(err, &me) {
					t.Errorf("error %T is not a *manifest.Error: %v", err, err)
				}
				msg := err.Error()
				if c.Match == "" {
					t.Errorf("expected.json gives no match substring for an invalid case")
				} else if !strings.Contains(strings.ToLower(msg), strings.ToLower(c.Match)) {
					t.Errorf("error %q does not mention %q (kubelet: %s)", msg, c.Match, c.Kubelet)
				}
				if c.NotEchoed != "" && strings.Contains(msg, c.NotEchoed) {
					t.Errorf("error echoes the value %q: %s", c.NotEchoed, msg)
				}
				if len(data) >= manifest.MaxSize && !errors.Is(err, manifest.ErrTooLarge) {
					t.Errorf("a %d-byte file must fail with ErrTooLarge, got %v", len(data), err)
				}
			default:
				t.Fatalf("verdict %q is neither valid nor invalid", wantVerdict)
			}
		})
	}
}
