package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// corpusDir is shared with pkg/manifest's own table test, which reads the
// same expectations without importing kubernetes.
var corpusDir = filepath.Join("..", "..", "..", "pkg", "manifest", "testdata", "corpus")

const (
	expectedFile = "expected.json"
	nodeName     = "node-1"
)

// expectations is the layout of expected.json. Fields marked "kubelet" are
// rewritten by -update from the oracle; the rest are set by hand and kept.
type expectations struct {
	Node  string      `json:"node"`
	Cases []*caseSpec `json:"cases"`
}

type caseSpec struct {
	File  string `json:"file"`
	About string `json:"about"`
	// Generate builds content at test time instead of reading File, for
	// content too large to commit.
	Generate *generateSpec `json:"generate,omitempty"`

	Verdict string `json:"verdict"`           // kubelet: "valid" or "invalid"
	Key     string `json:"key,omitempty"`     // kubelet: namespace/name when valid
	Kubelet string `json:"kubelet,omitempty"` // kubelet: its message, abridged, for reading only

	// Match must occur, ignoring case, in podwatch's error and, unless
	// MatchKubelet is set, in the kubelet's.
	Match        string `json:"match,omitempty"`
	MatchKubelet string `json:"match_kubelet,omitempty"`
	// Ignored: podwatch should report content the kubelet silently drops.
	Ignored bool `json:"ignored,omitempty"`
	// NotEchoed is a value from the file that podwatch's error must not
	// repeat, because it may be a secret.
	NotEchoed string `json:"not_echoed,omitempty"`
	// SameHashAs names a case whose podwatch Hash must be identical.
	SameHashAs string `json:"same_hash_as,omitempty"`
	// Divergence declares, with the reason, that podwatch deliberately
	// disagrees with the kubelet on this case; PodwatchVerdict/PodwatchKey
	// then say what podwatch gives instead.
	Divergence      string `json:"divergence,omitempty"`
	PodwatchVerdict string `json:"podwatch_verdict,omitempty"`
	PodwatchKey     string `json:"podwatch_key,omitempty"`
}

type generateSpec struct {
	From string `json:"from"`
	Size int    `json:"size"`
}

func loadExpectations(t testing.TB) *expectations {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(corpusDir, expectedFile))
	if err != nil {
		t.Fatal(err)
	}
	var e expectations
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a misspelt field would silently weaken a case
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("%s: %v", expectedFile, err)
	}
	if e.Node != nodeName {
		t.Fatalf("%s: node %q, the oracle runs as %q", expectedFile, e.Node, nodeName)
	}
	return &e
}

func (e *expectations) save() error {
	sort.Slice(e.Cases, func(i, j int) bool { return e.Cases[i].File < e.Cases[j].File })
	return saveJSON(filepath.Join(corpusDir, expectedFile), e)
}

// saveJSON writes v as -update writes expectations: indented, HTML left
// unescaped, so a diff of the file reads as the change it is.
func saveJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// corpusFiles lists the manifest files on disk: everything but expected.json.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != expectedFile {
			out = append(out, e.Name())
		}
	}
	return out
}

// content returns a case's bytes. A generated case pads its source with one
// long YAML comment, so it stays a valid pod up to the size limit.
func (c *caseSpec) content(t testing.TB) []byte {
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
		t.Fatalf("%s: size %d is smaller than %s", c.File, c.Generate.Size, c.Generate.From)
	}
	out := make([]byte, 0, c.Generate.Size)
	out = append(out, base...)
	out = append(out, '#')
	out = append(out, bytes.Repeat([]byte{'x'}, pad)...)
	return append(out, '\n')
}

// checkCoverage fails when a file has no expectation or an expectation has no
// file, so nothing in the corpus is skipped silently.
func checkCoverage(t *testing.T, e *expectations) {
	t.Helper()
	known := map[string]bool{}
	for _, c := range e.Cases {
		if known[c.File] {
			t.Errorf("%s: %s listed twice", expectedFile, c.File)
		}
		known[c.File] = true
		if _, err := os.Stat(filepath.Join(corpusDir, c.File)); c.Generate == nil && err != nil {
			t.Errorf("%s: %s has no file", expectedFile, c.File)
		}
	}
	for _, f := range corpusFiles(t) {
		if !known[f] {
			t.Errorf("%s has no entry in %s (run the oracle test with -update)", f, expectedFile)
		}
	}
}

var hexAddr = regexp.MustCompile(`0x[0-9a-f]{6,}`)

// normalize hides the pointer addresses that the kubelet's %#v dumps of
// non-pod objects carry, which change from run to run.
func normalize(msg string) string { return hexAddr.ReplaceAllString(msg, "0x…") }

// abridge makes a kubelet message fit for a data file; some dumps run to
// kilobytes.
func abridge(msg string) string {
	msg = normalize(msg)
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return msg
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func verdictWord(valid bool) string {
	if valid {
		return "valid"
	}
	return "invalid"
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

func describe(valid bool, key, msg string) string {
	if valid {
		return fmt.Sprintf("valid %s", key)
	}
	return "invalid: " + msg
}
