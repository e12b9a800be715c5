//go:build linux

package kubelet_test

import (
	"strings"
	"testing"
)

// A marker covers a race: a racy scenario whose marked disagreement
// shows in most runs of a go fails (a clean-clone run once showed one in
// 8 of 10 runs, and passed); one run once may always disagree.
func TestMarkedTooOften(t *testing.T) {
	runs := func(family string, n, disagreed int) []result {
		var out []result
		for i := range n {
			out = append(out, result{name: family, family: family, disagreement: "a race", agree: i >= disagreed})
		}
		return out
	}
	var results []result
	results = append(results, runs("most", 10, 8)...)
	results = append(results, runs("half", 10, 5)...)
	results = append(results, runs("one", 1, 1)...)
	results = append(results, runs("none", 20, 0)...)
	got := markedTooOften(results)
	if len(got) != 1 || !strings.HasPrefix(got[0], "most: ") || !strings.Contains(got[0], "8 of 10 runs") {
		t.Errorf("markedTooOften named %q, want most (8 of 10 runs) alone", got)
	}
}
