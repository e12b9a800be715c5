package e2e

// File-system faults at agent level: manifest symlinks, permission
// denied as an unprivileged uid, inotify instances exhausted for a throwaway
// uid, a burst of 1,000 files and a folder of 10,000 manifests.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
	"github.com/podwatch/podwatch/pkg/store"
)

// faultsWait is the deadline of every poll here: generous, for a loaded
// 2-core CI machine; a passing run returns as soon as the condition holds.
const faultsWait = 15 * time.Second

// holdInotifyEnv makes the test binary, re-executed as a throwaway uid,
// exhaust one inotify limit, print what it holds, and hold it until stdin
// closes. "instances" opens instances until the kernel refuses;
// "watches:DIR" adds watches on DIR's files from instance after instance.
const holdInotifyEnv = "PODWATCH_TEST_HOLD_INOTIFY"

// holderInstances bounds the instances a "watches" holder opens, leaving
// the agent of the same uid room for its own (max_user_instances is 128
// here).
const holderInstances = 100

// holdInotify is what the re-executed test binary does instead of testing;
// TestMain calls it first.
func holdInotify(mode string) {
	instances, watches := 0, 0
	var err error
	if dir, ok := strings.CutPrefix(mode, "watches:"); ok {
		var names []string
		if names, err = filepath.Glob(filepath.Join(dir, "*")); err == nil {
		fill:
			for instances < holderInstances {
				var fd int
				if fd, err = unix.InotifyInit1(unix.IN_CLOEXEC); err != nil {
					break
				}
				instances++
				for _, n := range names {
					if _, err = unix.InotifyAddWatch(fd, n, unix.IN_MODIFY); err != nil {
						break fill
					}
					watches++
				}
			}
		}
	} else {
		for instances < 1<<16 {
			if _, err = unix.InotifyInit1(unix.IN_CLOEXEC); err != nil {
				break
			}
			instances++
		}
	}
	fmt.Printf("held %d instances, %d watches; uid=%d err=%v\n", instances, watches, os.Getuid(), err)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// waitUntil polls cond until it holds, or fails with what() at the deadline.
func waitUntil(t *testing.T, d time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eventsWith returns the stdout Events with reason whose message has substr.
func eventsWith(evs []v1.Event, reason, substr string) []v1.Event {
	var out []v1.Event
	for _, ev := range evs {
		if ev.Reason == reason && strings.Contains(ev.Message, substr) {
			out = append(out, ev)
		}
	}
	return out
}

// maxCount is the highest count among evs (0 when none).
func maxCount(evs []v1.Event) int32 {
	var n int32
	for _, ev := range evs {
		n = max(n, ev.Count)
	}
	return n
}

// writeReadable is writeByRename with mode 0644 from the start, so an agent
// running as another uid never sees the file unreadable.
func writeReadable(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// markerRelisted drops an invalid manifest named name and waits until its
// InvalidManifest count reaches 2: it was reported after the settle delay
// and a full relist ran after that, so whatever was written before the marker
// has been through both.
func markerRelisted(t *testing.T, dir, name string, evs func() []v1.Event, dump func() string) {
	t.Helper()
	writeReadable(t, dir, name, "kind: Pod\n")
	waitUntil(t, faultsWait, func() bool { return maxCount(eventsWith(evs(), "InvalidManifest", name+" is invalid")) >= 2 },
		func() string { return "marker " + name + " not reported twice (one relist after it):\n" + dump() })
}

// ---- 1. Manifest symlinks -------------------------------------------------

func TestFaultManifestSymlinks(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	writeByRename(t, elsewhere, "web.yaml", manifestYAML("web", "nginx:1.28"))
	a := startAgent(t, dir)
	a.waitFirstList()
	if err := os.Symlink(filepath.Join(elsewhere, "web.yaml"), filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	evs := func() []v1.Event { return a.out.events(t) }
	waitUntil(t, faultsWait, func() bool { return len(eventsWith(evs(), "StaticPodAdded", "web.yaml")) > 0 },
		func() string { return "no ADD for a manifest that is a symlink:\n" + a.dump() })

	// Editing the target (outside the watched folder) is seen at the latest
	// by the next relist.
	writeByRename(t, elsewhere, "web.yaml", manifestYAML("web", "nginx:1.29"))
	waitUntil(t, faultsWait, func() bool {
		return len(eventsWith(evs(), "StaticPodUpdated", "image 1.28 → 1.29")) > 0
	}, func() string { return "edit of the symlink's target not seen:\n" + a.dump() })

	// A dangling symlink and a loop: the kubelet skips both, silently.
	ghost := filepath.Join(elsewhere, "ghost.yaml")
	if err := os.Symlink(ghost, filepath.Join(dir, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-b.yaml", filepath.Join(dir, "loop-a.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-a.yaml", filepath.Join(dir, "loop-b.yaml")); err != nil {
		t.Fatal(err)
	}
	markerRelisted(t, dir, "zz-marker1.yaml", evs, a.dump)
	for _, ev := range evs() {
		for _, name := range []string{"dangling", "loop-a", "loop-b", "ghost"} {
			if strings.Contains(ev.Message, name) {
				t.Errorf("%s gave %s %s: %s", name, ev.Type, ev.Reason, ev.Message)
			}
		}
	}

	// The dangling link's target appears: the link is now a manifest. No
	// event names it in the folder, so only the relist can see it.
	writeByRename(t, elsewhere, "ghost.yaml", manifestYAML("ghost", "nginx:1.29"))
	waitUntil(t, faultsWait, func() bool { return len(eventsWith(evs(), "StaticPodAdded", "dangling.yaml")) > 0 },
		func() string { return "no ADD once the dangling symlink's target appeared:\n" + a.dump() })
	if n := len(eventsWith(evs(), "StaticPodRemoved", "")); n != 0 {
		t.Errorf("%d REMOVEs:\n%s", n, a.dump())
	}
}

// ---- running the binary as an unprivileged uid -----------------------------

const nobody = 65534

// nobodyDir is a fresh folder under os.TempDir() that uid 65534 can enter
// (mode 0755; t.TempDir's parents may be 0700), removed at cleanup.
func nobodyDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the agent as uid 65534 (as root chmod 000 denies nothing, so the test must switch uid)")
	}
	d, err := os.MkdirTemp(os.TempDir(), "podwatch-faults-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error { _ = os.Chmod(p, 0o755); return nil })
		_ = os.RemoveAll(d)
	})
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// buildAgentFor builds the binary into root (0755) and checks that it runs as
// uid 65534, skipping when the switch is refused.
func buildAgentFor(t *testing.T, root string) string {
	t.Helper()
	bin := buildPodwatch(t, root)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := exec.Command(bin, "version")
	probe.SysProcAttr = asNobody()
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("cannot run a process as uid %d here (setuid refused?): %v %s", nobody, err, out)
	}
	return bin
}

func asNobody() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
}

// procAgent is the binary running as uid 65534 with -o json.
type procAgent struct {
	t       *testing.T
	cmd     *exec.Cmd
	mu      sync.Mutex
	evs     []v1.Event
	bad     []string
	stderr  lockedBuffer
	readEnd chan struct{}
	exited  chan error
	stopped bool
}

func startProcAgent(t *testing.T, bin, dir, stateDir string, extra ...string) *procAgent {
	t.Helper()
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(stateDir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--path", dir, "--state-dir", stateDir, "--node-name", testNode, "-o", "json",
		"--log-format", "json", "--metrics-bind-address", "127.0.0.1:0", "--settle-delay", "100ms",
		"--file-check-frequency", "500ms", "--shutdown-timeout", "2s"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = asNobody()
	return runProcAgent(t, cmd)
}

// runProcAgent starts cmd, an agent with -o json, and collects its Events;
// the test's end stops it with SIGTERM.
func runProcAgent(t *testing.T, cmd *exec.Cmd) *procAgent {
	t.Helper()
	p := &procAgent{t: t, cmd: cmd, readEnd: make(chan struct{}), exited: make(chan error, 1)}
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.readEnd)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev v1.Event
			err := json.Unmarshal(sc.Bytes(), &ev)
			p.mu.Lock()
			if err != nil {
				p.bad = append(p.bad, sc.Text())
			} else {
				p.evs = append(p.evs, ev)
			}
			p.mu.Unlock()
		}
	}()
	go func() {
		<-p.readEnd
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *procAgent) stop() { p.stopWith(syscall.SIGTERM) }

// stopWith sends sig and requires a clean exit (status 0) in time.
func (p *procAgent) stopWith(sig syscall.Signal) {
	if p.stopped {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.exited:
		if err != nil {
			p.t.Errorf("agent exit: %v; stderr:\n%s", err, p.stderr.String())
		}
	case <-time.After(faultsWait):
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.t.Errorf("agent did not exit within %v of %v", faultsWait, sig)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bad) > 0 {
		p.t.Errorf("stdout lines that are not v1 Events: %q", p.bad)
	}
}

func (p *procAgent) events() []v1.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]v1.Event(nil), p.evs...)
}

func (p *procAgent) dump() string {
	var sb strings.Builder
	for _, ev := range p.events() {
		fmt.Fprintf(&sb, "  %s %s %s/%s x%d: %s\n", ev.Type, ev.Reason, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Count, ev.Message)
	}
	fmt.Fprintf(&sb, "stderr:\n%s", p.stderr.String())
	return sb.String()
}

func (p *procAgent) waitEvent(reason, substr string) v1.Event {
	p.t.Helper()
	var got v1.Event
	waitUntil(p.t, faultsWait, func() bool {
		evs := eventsWith(p.events(), reason, substr)
		if len(evs) > 0 {
			got = evs[len(evs)-1]
		}
		return len(evs) > 0
	}, func() string { return fmt.Sprintf("no %s event containing %q:\n%s", reason, substr, p.dump()) })
	return got
}

// metricsURL is the address from the "serving metrics and health" log line.
func (p *procAgent) metricsURL() string {
	p.t.Helper()
	var url string
	waitUntil(p.t, faultsWait, func() bool {
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving metrics and health" && l.Addr != "" {
				url = "http://" + l.Addr
				return true
			}
		}
		return false
	}, func() string { return "no metrics address in the log:\n" + p.stderr.String() })
	return url
}

func assertWarningNode(t *testing.T, ev v1.Event) {
	t.Helper()
	if ev.Type != "Warning" || ev.InvolvedObject.Kind != "Node" || ev.InvolvedObject.Name != testNode {
		t.Errorf("%s is %s on %s/%s, want Warning on Node/%s", ev.Reason, ev.Type, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, testNode)
	}
}

// ---- 2. Permission denied, for real ----------------------------------------

func TestFaultPermissionDeniedAsUnprivilegedUID(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root := nobodyDir(t)
	bin := buildAgentFor(t, root)
	dir := filepath.Join(root, "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) { t.Helper(); writeReadable(t, dir, name, content) }
	p := startProcAgent(t, bin, dir, filepath.Join(root, "state"))
	p.waitFirstList()
	write("a.yaml", manifestYAML("a", "nginx:1.29"))
	write("b.yaml", manifestYAML("b", "nginx:1.29"))
	p.waitEvent("StaticPodAdded", "a.yaml")
	p.waitEvent("StaticPodAdded", "b.yaml")
	b := filepath.Join(dir, "b.yaml")

	// One file unreadable: a Warning on the Node, the pod kept, the others work.
	if err := os.Chmod(b, 0); err != nil {
		t.Fatal(err)
	}
	ev := p.waitEvent("ManifestUnreadable", "b.yaml")
	assertWarningNode(t, ev)
	if !strings.Contains(ev.Message, "permission denied") {
		t.Errorf("unreadable message does not say why: %s", ev.Message)
	}
	write("c.yaml", manifestYAML("c", "nginx:1.29"))
	p.waitEvent("StaticPodAdded", "c.yaml")
	write("a.yaml", manifestYAML("a", "nginx:1.30"))
	p.waitEvent("StaticPodUpdated", "image 1.29 → 1.30")
	markerRelisted(t, dir, "zz-m1.yaml", p.events, p.dump)
	if n := len(eventsWith(p.events(), "StaticPodRemoved", "")); n != 0 {
		t.Fatalf("an unreadable file removed a pod (the kubelet, as root, still reads it):\n%s", p.dump())
	}

	// Readable again, same content: nothing at all about b.
	if err := os.Chmod(b, 0o644); err != nil {
		t.Fatal(err)
	}
	markerRelisted(t, dir, "zz-m2.yaml", p.events, p.dump)
	if n := len(eventsWith(p.events(), "StaticPodAdded", "b.yaml")); n != 1 {
		t.Errorf("b.yaml ADDs = %d, want 1 (the pod was kept):\n%s", n, p.dump())
	}
	for _, r := range []string{"StaticPodRemoved", "StaticPodUpdated"} {
		if n := len(eventsWith(p.events(), r, "b.yaml")); n != 0 {
			t.Errorf("spurious %s for b.yaml after it became readable again:\n%s", r, p.dump())
		}
	}

	// Unreadable again, changed meanwhile, readable: one correct UPDATE.
	unreadable := len(eventsWith(p.events(), "ManifestUnreadable", "b.yaml"))
	if err := os.Chmod(b, 0); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, faultsWait, func() bool { return len(eventsWith(p.events(), "ManifestUnreadable", "b.yaml")) > unreadable },
		func() string { return "second ManifestUnreadable for b.yaml missing:\n" + p.dump() })
	if err := os.WriteFile(b, []byte(manifestYAML("b", "nginx:1.31")), 0); err != nil { // root writes through 000
		t.Fatal(err)
	}
	if err := os.Chmod(b, 0o644); err != nil {
		t.Fatal(err)
	}
	up := p.waitEvent("StaticPodUpdated", "b.yaml")
	if !strings.Contains(up.Message, "image 1.29 → 1.31") {
		t.Errorf("UPDATE after the change made while unreadable = %q", up.Message)
	}

	// The folder unreadable: a Warning for the path, every pod kept.
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	dev := p.waitEvent("ManifestUnreadable", "cannot read manifest path "+dir)
	assertWarningNode(t, dev)
	// Two more relists with the folder unreadable (the path problem is
	// reported again on each relist; count >= 3 means two relists after the first).
	waitUntil(t, faultsWait, func() bool {
		return maxCount(eventsWith(p.events(), "ManifestUnreadable", "cannot read manifest path")) >= 3
	}, func() string { return "relists stopped while the folder was unreadable:\n" + p.dump() })
	if n := len(eventsWith(p.events(), "StaticPodRemoved", "")); n != 0 {
		t.Fatalf("an unreadable folder removed pods:\n%s", p.dump())
	}

	// Readable again: recovers, and new files are seen.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write("d.yaml", manifestYAML("d", "nginx:1.29"))
	p.waitEvent("StaticPodAdded", "d.yaml")
	markerRelisted(t, dir, "zz-m3.yaml", p.events, p.dump)
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml", "d.yaml"} {
		if n := len(eventsWith(p.events(), "StaticPodAdded", name)); n != 1 {
			t.Errorf("%s ADDs = %d, want 1:\n%s", name, n, p.dump())
		}
	}
	if n := len(eventsWith(p.events(), "StaticPodRemoved", "")); n != 0 {
		t.Errorf("REMOVEs after the folder became readable:\n%s", p.dump())
	}
}

// ---- 3. inotify limits exhausted for a throwaway uid ----------------------

// inotifyLimit reads /proc/sys/fs/inotify/<name>, skipping the test where
// it is missing or too high to exhaust in a test.
func inotifyLimit(t *testing.T, name string, most int) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/sys/fs/inotify/" + name)
	if err != nil {
		t.Skipf("no inotify limits here: %v", err)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if limit > most {
		t.Skipf("fs.inotify.%s is %d: too many to exhaust in a test", name, limit)
	}
	return limit
}

// startHolder runs this test binary as uid 65534 in holdInotify mode and
// returns what it printed once it holds the limit, and a release that
// frees it (Cleanup also does).
func startHolder(t *testing.T, root, mode string) (said string, release func()) {
	t.Helper()
	// The holder is this test binary, copied where uid 65534 can run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	helperBin := filepath.Join(root, "holder.test")
	if err := os.WriteFile(helperBin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command(helperBin, "-test.run=^$")
	holder.Env = append(os.Environ(), holdInotifyEnv+"="+mode)
	holder.SysProcAttr = asNobody()
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	hout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		stdin.Close()
		if err := holder.Wait(); err != nil {
			t.Errorf("inotify holder: %v", err)
		}
	}
	t.Cleanup(release)
	line, err := bufio.NewReader(hout).ReadString('\n')
	if err != nil {
		t.Fatalf("holder said nothing: %v", err)
	}
	return strings.TrimSpace(line), release
}

// degradedUntilReleased runs the agent as uid 65534 while another process of
// that uid holds an inotify limit: podwatch lists instead, says so once as a
// WatchDegraded Warning naming why, and has its watch back after release.
func degradedUntilReleased(t *testing.T, root, bin, why string, release func()) {
	t.Helper()
	dir := filepath.Join(root, "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := startProcAgent(t, bin, dir, filepath.Join(root, "state"))
	metrics := p.metricsURL()
	p.waitFirstList()
	writeReadable(t, dir, "a.yaml", manifestYAML("a", "nginx:1.29"))
	p.waitEvent("StaticPodAdded", "a.yaml")
	wd := p.waitEvent("WatchDegraded", "")
	assertWarningNode(t, wd)
	if !strings.Contains(wd.Message, why) {
		t.Errorf("WatchDegraded does not say %q: %s", why, wd.Message)
	}
	waitMetric(t, metrics, "podwatch_watch_up 0")

	// Listing goes on: a new file is seen by the relist.
	writeReadable(t, dir, "b.yaml", manifestYAML("b", "nginx:1.29"))
	p.waitEvent("StaticPodAdded", "b.yaml")
	// Several relists and watch retries later it was still said once.
	markerRelisted(t, dir, "zz-m1.yaml", p.events, p.dump)
	waitUntil(t, faultsWait, func() bool { return strings.Count(p.stderr.String(), `"msg":"cannot watch manifest path"`) >= 1 },
		func() string { return "no 'cannot watch' log line:\n" + p.stderr.String() })

	// Limit freed: the watch comes back within the backoff (max 20s).
	release()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := get(t, metrics+"/metrics")
		if strings.Contains(body, "podwatch_watch_up 1\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch not up 30s after the inotify limit was freed:\n%s", p.dump())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(p.stderr.String(), "manifest watch up again") {
		t.Errorf("no 'manifest watch up again' log line:\n%s", p.stderr.String())
	}
	writeReadable(t, dir, "c.yaml", manifestYAML("c", "nginx:1.29"))
	p.waitEvent("StaticPodAdded", "c.yaml")
	if evs := eventsWith(p.events(), "WatchDegraded", ""); len(evs) != 1 || evs[0].Count != 1 {
		t.Errorf("WatchDegraded said %d times (last count %d), want once:\n%s", len(evs), maxCount(evs), p.dump())
	}
}

func TestFaultInotifyInstancesExhaustedAsUnprivilegedUID(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	limit := inotifyLimit(t, "max_user_instances", 1024)
	root := nobodyDir(t)
	bin := buildAgentFor(t, root)
	said, release := startHolder(t, root, "instances")
	t.Logf("holder: %s (max_user_instances %d)", said, limit)
	if !strings.Contains(said, "too many open files") {
		t.Fatalf("holder did not exhaust the instances: %s", said)
	}
	degradedUntilReleased(t, root, bin, "too many open files (this user's inotify instances are used up: fs.inotify.max_user_instances)", release)
}

func TestFaultInotifyWatchesExhaustedAsUnprivilegedUID(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// Each watch pins kernel memory (a few hundred bytes): a few hundred
	// thousand is fine, millions are not a test's to take.
	limit := inotifyLimit(t, "max_user_watches", 600_000)
	root := nobodyDir(t)
	bin := buildAgentFor(t, root)
	// holderInstances instances watching the same files exceed the limit
	// with few files.
	files := filepath.Join(root, "watched")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range limit/holderInstances + 1 {
		if err := os.WriteFile(filepath.Join(files, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	said, release := startHolder(t, root, "watches:"+files)
	t.Logf("holder: %s (max_user_watches %d)", said, limit)
	if !strings.Contains(said, "no space left on device") {
		t.Fatalf("holder did not exhaust the watches: %s", said)
	}
	degradedUntilReleased(t, root, bin, "no space left on device (this user's inotify watches are used up: fs.inotify.max_user_watches)", release)
}

// ---- 4. Burst and scale ----------------------------------------------------

func countByName(evs []v1.Event, reason string) (lines int, names map[string]int) {
	names = map[string]int{}
	for _, ev := range evs {
		if ev.Reason == reason {
			lines++
			names[ev.InvolvedObject.Name]++
		}
	}
	return lines, names
}

func heapReport(t *testing.T, what string) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	hwm := ""
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "VmHWM:") || strings.HasPrefix(l, "VmRSS:") {
				hwm += " " + strings.Join(strings.Fields(l), " ")
			}
		}
	}
	t.Logf("%s: heap in use %.1f MiB, heap sys %.1f MiB, total alloc %.0f MiB, GCs %d; test process%s",
		what, float64(ms.HeapInuse)/(1<<20), float64(ms.HeapSys)/(1<<20), float64(ms.TotalAlloc)/(1<<20), ms.NumGC, hwm)
}

func TestFaultBurstOf1000Files(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir)
	evs := func() []v1.Event { return a.out.events(t) }
	a.waitFirstList()
	writeByRename(t, dir, "first.yaml", manifestYAML("first", "nginx:1.29"))
	a.waitEvent("StaticPodAdded", "first.yaml")

	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("burst-%04d.yaml", i)
			tmp := filepath.Join(dir, "."+name+".tmp")
			if err := os.WriteFile(tmp, []byte(manifestYAML(fmt.Sprintf("burst-%04d", i), "nginx:1.29")), 0o600); err != nil {
				errs <- err
				return
			}
			if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, names := countByName(evs(), "StaticPodAdded")
		if len(names) >= n+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d burst ADDs after 60s", len(names)-1, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	markerRelisted(t, dir, "zz-marker.yaml", evs, func() string { return "(dump omitted)" })
	lines, names := countByName(evs(), "StaticPodAdded")
	if lines != n+1 || len(names) != n+1 {
		t.Fatalf("ADD lines %d for %d pods, want exactly %d each", lines, len(names), n+1)
	}
	for name, c := range names {
		if c != 1 {
			t.Errorf("%s added %d times", name, c)
		}
	}
	for _, ev := range evs() {
		if ev.Reason != "StaticPodAdded" && !strings.Contains(ev.Message, "zz-marker.yaml") {
			t.Errorf("unexpected %s: %s", ev.Reason, ev.Message)
		}
	}
	t.Logf("burst: %d files written by rename from %d goroutines, all %d ADDs within %v", n, n, n, took.Round(time.Millisecond))
	heapReport(t, "after the burst")
}

func TestFaultTenThousandManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 manifests")
	}
	const n = 10000
	dir := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("pod-%05d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(manifestYAML(name, "registry.k8s.io/pause:3.10")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	heapReport(t, "before start")
	start := time.Now()
	state := t.TempDir()
	a := startAgent(t, dir, func(o *agent.Options) { o.StateDir = state })
	evs := func() []v1.Event { return a.out.events(t) }
	deadline := time.Now().Add(120 * time.Second)
	for {
		_, names := countByName(evs(), "StaticPodFound")
		if len(names) >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d ADDs after 120s", len(names), n)
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(start)
	heapReport(t, "after 10,000 ADDs")
	// A relist (at least one, after the marker) finds nothing new.
	markerRelisted(t, dir, "zz-marker.yaml", evs, func() string { return "(dump omitted)" })
	lines, names := countByName(evs(), "StaticPodFound")
	if lines != n || len(names) != n {
		t.Fatalf("ADD lines %d for %d pods, want exactly %d", lines, len(names), n)
	}
	for _, ev := range evs() {
		if ev.Reason != "StaticPodFound" && !strings.Contains(ev.Message, "zz-marker.yaml") {
			t.Errorf("a relist gave %s: %s", ev.Reason, ev.Message)
		}
	}
	t.Logf("10,000 manifests: all ADDs within %v of start", took.Round(time.Millisecond))
	heapReport(t, "after relists")
	// Whatever the store had not taken yet is flushed at shutdown, in
	// batches, well within the harness's 5 s.
	stopped := time.Now()
	a.shutdown()
	t.Logf("shutdown took %v", time.Since(stopped).Round(time.Millisecond))
	stored, err := store.ReadEvents(state)
	if err != nil {
		t.Fatal(err)
	}
	// The store keeps the newest Events (ADDs, and the few Events of the
	// relist marker), never more than DefaultMaxEvents, in its log as well:
	// past the bound it drops a tenth of it and compacts.
	_, names = countByName(stored, "StaticPodFound")
	least := store.DefaultMaxEvents - store.DefaultMaxEvents/10
	if len(stored) > store.DefaultMaxEvents || len(stored) < least || len(names) < least-5 {
		t.Fatalf("the store holds %d Events, ADDs of %d pods, after shutdown; want %d to %d, nearly all ADDs",
			len(stored), len(names), least, store.DefaultMaxEvents)
	}
}
