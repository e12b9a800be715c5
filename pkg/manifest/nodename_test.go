package manifest

import (
	"strings"
	"testing"
)

func TestNodeNameAsTheKubeletDerivesIt(t *testing.T) {
	for raw, want := range map[string]string{
		"node-1":           "node-1",
		"CP1":              "cp1",
		"  Worker-7.Lab\n": "worker-7.lab",
	} {
		got, err := NodeName(raw)
		if err != nil || got != want {
			t.Errorf("NodeName(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for raw, msg := range map[string]string{
		"":      "node name is empty",
		"  ":    "node name is empty",
		"cp_1":  `node name "cp_1"`,
		"-node": `node name "-node"`,
		"a..b":  `node name "a..b"`,
	} {
		if _, err := NodeName(raw); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("NodeName(%q) = %v; want an error containing %q", raw, err, msg)
		}
	}
}
