package e2e

// Two podwatch processes on one manifest folder and one state dir, as a
// systemd unit and a DaemonSet on the same node would be: the second stands
// by, says who holds the folder and announces nothing until it takes over.

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/podwatch/podwatch/internal/testutil"
)

// startTwinProc runs the binary as this uid on dir and state, with $POD_NAME
// set as the DaemonSet sets it and the metrics server on a free port.
func startTwinProc(t *testing.T, bin, dir, state, pod string) *procAgent {
	t.Helper()
	cmd := exec.Command(bin, "--path", dir, "--state-dir", state, "--node-name", testNode, "-o", "json",
		"--log-format", "json", "--metrics-bind-address", "127.0.0.1:0", "--settle-delay", "100ms",
		"--file-check-frequency", "500ms", "--shutdown-timeout", "2s")
	cmd.Env = append(os.Environ(), "POD_NAME="+pod)
	return runProcAgent(t, cmd)
}

// changes are the Events of p that announce a change to a pod.
func changes(p *procAgent) int {
	n := 0
	for _, ev := range p.events() {
		switch ev.Reason {
		case "StaticPodAdded", "StaticPodUpdated", "StaticPodRemoved":
			n++
		}
	}
	return n
}

func TestTwinStandsByUntilTheFirstStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, dir, state, key := binaryAndFolder(t)

	first := startTwinProc(t, bin, dir, state, "podwatch-first")
	first.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.28"))
	first.waitEvent("StaticPodAdded", "web.yaml")
	waitShards(t, state, map[string]string{key: "nginx:1.28"})

	started := time.Now()
	second := startTwinProc(t, bin, dir, state, "podwatch-second")
	base := second.metricsURL()
	client := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	readyz := func() (int, string) { return testutil.HTTPGet(t, client, base+"/readyz") }
	var body string
	waitUntil(t, faultsWait, func() bool {
		var code int
		code, body = readyz()
		return code == http.StatusServiceUnavailable && strings.HasPrefix(body, "standby: ")
	}, func() string { return "the second is not a standby: /readyz " + body + "\n" + second.dump() })
	for _, want := range []string{"pod podwatch-first", "started " + started.UTC().Format("2006-01-02T")} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz of the standby %q does not name the holder by %q", body, want)
		}
	}
	t.Logf("standby /readyz: %s", strings.TrimSpace(body))

	// A change while both run: the first announces it, the second nothing.
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	first.waitEvent("StaticPodUpdated", "image 1.28 → 1.29")
	markerRelisted(t, dir, "zz-marker1.yaml", first.events, first.dump)
	if evs := second.events(); len(evs) != 0 {
		t.Fatalf("the standby printed %d Events:\n%s", len(evs), second.dump())
	}
	if code, body := readyz(); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz of the standby = %d %q, want 503", code, body)
	}

	first.stop()
	stopped := time.Now()
	waitUntil(t, faultsWait, func() bool { code, _ := readyz(); return code == http.StatusOK },
		func() string {
			code, body := readyz()
			return "no takeover: /readyz " + http.StatusText(code) + " " + body
		})
	t.Logf("the second was ready %v after the first stopped", time.Since(stopped).Round(10*time.Millisecond))
	// Relisted after the takeover: whatever it would announce of the
	// folder as the first left it, it has.
	markerRelisted(t, dir, "zz-marker2.yaml", second.events, second.dump)
	if n := changes(second); n != 0 {
		t.Fatalf("the second announced %d changes at its takeover, none happened:\n%s", n, second.dump())
	}
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.30"))
	second.waitEvent("StaticPodUpdated", "image 1.29 → 1.30")
	if n := changes(second); n != 1 {
		t.Errorf("the second announced %d changes, want the one UPDATE:\n%s", n, second.dump())
	}
}
