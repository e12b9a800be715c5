//go:build linux

package kubelet

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
	apitesting "k8s.io/cri-api/pkg/apis/testing"
)

// Sysctls are the kernel settings the kubelet's container manager sets at
// start (setupKernelTunables), with the values it wants. In its mount
// namespace each is a read-only file holding that value, so the kubelet
// reads what it wants and writes nothing.
func Sysctls() map[string]int {
	return map[string]int{
		utilsysctl.VMOvercommitMemory: utilsysctl.VMOvercommitMemoryAlways,
		utilsysctl.VMPanicOnOOM:       utilsysctl.VMPanicOnOOMInvokeOOMKiller,
		utilsysctl.KernelPanic:        utilsysctl.KernelPanicRebootTimeout,
		utilsysctl.KernelPanicOnOops:  utilsysctl.KernelPanicOnOopsAlways,
		utilsysctl.RootMaxKeys:        utilsysctl.RootMaxKeysSetting,
		utilsysctl.RootMaxBytes:       utilsysctl.RootMaxBytesSetting,
	}
}

// tmpfsDirs are the host folders the kubelet writes to on its own (its root
// dir, pod and container logs), separated by spaces; each is a fresh tmpfs
// in its namespace.
const tmpfsDirs = "/var/lib /var/log"

// isolate is the shell between unshare and the kubelet: it mounts what
// protects the host, then execs the command. Its arguments are pairs of a
// file holding a value and the /proc/sys file to cover with it, then "--"
// and the command.
const isolate = `set -eu
for d in $TMPFS; do mount -t tmpfs -o mode=0755 tmpfs "$d"; done
while [ "$1" != -- ]; do
	mount --bind "$1" "$2"
	mount -o remount,bind,ro "$2"
	shift 2
done
shift
exec "$@"
`

// Config is what Start needs.
type Config struct {
	Binary string // the kubelet, from apiserver.BuildKubelet
	// Dir is an empty folder for the kubelet's config, socket, logs and
	// manifests; its path must be short enough for a unix socket (about
	// 100 bytes).
	Dir string
	// NodeName is --hostname-override; the kubelet lowercases it.
	NodeName string
	// FileCheckFrequency is how often the kubelet lists the manifest
	// folder in full. Default 2s.
	FileCheckFrequency time.Duration
	// TrailingSlash writes staticPodPath with a trailing slash, as many
	// hand-written configs have it.
	TrailingSlash bool
	// Kubeconfig, when set, connects the kubelet to an API server: it
	// registers its Node and creates a mirror pod for each static pod.
	// Empty: standalone, as the scenarios run it.
	Kubeconfig string
	// ports, for a test: the kubelet's server and healthz ports, in place
	// of free ones.
	ports []int
}

// Kubelet is a running kubelet.
type Kubelet struct {
	// Manifests is the kubelet's staticPodPath.
	Manifests string
	// RelistClock is a folder inside Manifests that tells when the kubelet
	// lists it: the kubelet logs, at every full list and at nothing else,
	// that it does not recurse into it. A folder is no pod and no manifest
	// file, so the pods and the files a scenario sees are its own; its
	// name sorts before every manifest's, so the line comes at the start
	// of the list, before any file is read. RelistEnd is its twin whose
	// name sorts after every manifest's: its line ends the list.
	RelistClock, RelistEnd string
	// Log is the kubelet's stderr, CRILog the fake CRI's call log.
	Log, CRILog string
	// CRISocket is the fake CRI's unix socket, which a follower may read.
	CRISocket string
	dir       string    // Config.Dir
	started   time.Time // the file system's time just before the kubelet started
	hostMu    sync.Mutex
	hostPaths map[string]bool // see noteHostPaths
	hist      *History
	cri       *cri
	cmd       *exec.Cmd
	exited    chan struct{}
	waitErr   error // set before exited is closed
	// healthzTaken is closed when the kubelet says its healthz port is
	// taken, healthzErr (its log line) set before: it goes on without
	// healthz, trying again now and then, rather than exit.
	healthzTaken chan struct{}
	healthzErr   string
	closeLogs    func()
}

// History is what the kubelet has done so far.
func (k *Kubelet) History() *History { return k.hist }

// Isolation reports why the kubelet cannot be isolated here (no root, no
// unshare(1), no private mount namespace), nil when it can. It tries the
// very mounts Start makes, with true(1) in place of the kubelet.
func Isolation(dir string) error {
	if os.Geteuid() != 0 {
		return errors.New("needs root for a private mount namespace")
	}
	cmd, err := isolated(dir, "true")
	if err != nil {
		return err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("no private mount namespace with tmpfs and read-only sysctls here: %v: %s", err, out)
	}
	return nil
}

// isolated is argv run in a new private mount namespace set up by isolate.
// The sysctl values are written to files under dir.
func isolated(dir string, argv ...string) (*exec.Cmd, error) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, fmt.Errorf("no unshare(1) here: %w", err)
	}
	vals := filepath.Join(dir, "sysctl")
	if err := os.MkdirAll(vals, 0o755); err != nil {
		return nil, err
	}
	args := []string{"--mount", "--propagation", "private", "sh", "-c", isolate, "sh"}
	for name, v := range Sysctls() {
		f := filepath.Join(vals, strings.ReplaceAll(name, "/", "."))
		if err := os.WriteFile(f, []byte(strconv.Itoa(v)+"\n"), 0o444); err != nil {
			return nil, err
		}
		args = append(args, f, filepath.Join("/proc/sys", name))
	}
	args = append(append(args, "--"), argv...)
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), "TMPFS="+tmpfsDirs)
	// The kubelet must not outlive a test binary that dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// errPortTaken: the kubelet exited at start because a port it was given,
// free when chosen, was taken before it bound it.
var errPortTaken = errors.New("a port given to the kubelet was taken before it bound it")

// startAttempts bounds the starts of a kubelet whose port was taken.
const startAttempts = 3

// Start runs the fake CRI and the kubelet on cfg.Dir/manifests and returns
// once the kubelet's healthz answers and its server serves on its port, or
// the error that kept it from it.
// A port is free when chosen but not held until the kubelet binds it, so a
// kubelet that exits because it was taken meanwhile is started again.
func Start(ctx context.Context, cfg Config) (*Kubelet, error) {
	var errs []error
	for range startAttempts {
		k, err := start(ctx, cfg)
		if err == nil {
			return k, nil
		}
		if !errors.Is(err, errPortTaken) || cfg.ports != nil {
			return k, errors.Join(append(errs, err)...)
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func start(ctx context.Context, cfg Config) (_ *Kubelet, err error) {
	if cfg.FileCheckFrequency == 0 {
		cfg.FileCheckFrequency = 2 * time.Second
	}
	k := &Kubelet{
		Manifests:    filepath.Join(cfg.Dir, "manifests"),
		RelistClock:  filepath.Join(cfg.Dir, "manifests", "!relist-clock"),
		RelistEnd:    filepath.Join(cfg.Dir, "manifests", "~relist-end"),
		Log:          filepath.Join(cfg.Dir, "kubelet.log"),
		CRILog:       filepath.Join(cfg.Dir, "cri.log"),
		hist:         newHistory(),
		exited:       make(chan struct{}),
		healthzTaken: make(chan struct{}),
		dir:          filepath.Clean(cfg.Dir),
		hostPaths:    map[string]bool{},
	}
	// Until Start succeeds, what it started is undone on the way out.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	// The kubelet runs from an empty folder of its own: a container with
	// no log path makes its log cleanup delete what "*" matches there.
	cwd := filepath.Join(cfg.Dir, "cwd")
	for _, d := range []string{k.Manifests, k.RelistClock, k.RelistEnd, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	criLog, err := os.Create(k.CRILog)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { criLog.Close() })
	logFile, err := os.Create(k.Log)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { logFile.Close() })
	k.closeLogs = func() {
		criLog.Close()
		logFile.Close()
	}
	sock := filepath.Join(cfg.Dir, "cri.sock")
	k.CRISocket = sock
	if k.cri, err = startCRI(sock, criLog, k.hist); err != nil {
		return nil, err
	}
	undo = append(undo, k.cri.stop)
	ports := cfg.ports
	if ports == nil {
		if ports, err = freePorts(2); err != nil {
			return nil, err
		}
	}
	conf := filepath.Join(cfg.Dir, "config.yaml")
	staticPodPath := k.Manifests
	if cfg.TrailingSlash {
		staticPodPath += "/"
	}
	plugins := filepath.Join(cfg.Dir, "volume-plugins")
	if err := os.WriteFile(conf, []byte(config(staticPodPath, plugins, "unix://"+sock, cfg.FileCheckFrequency, ports[0], ports[1])), 0o644); err != nil {
		return nil, err
	}
	argv := []string{cfg.Binary, "--config=" + conf, "--hostname-override=" + cfg.NodeName, "--v=2", "--vmodule=file=3,config=4,pod_workers=4"}
	if cfg.Kubeconfig != "" {
		argv = append(argv, "--kubeconfig="+cfg.Kubeconfig)
	}
	if k.cmd, err = isolated(cfg.Dir, argv...); err != nil {
		return nil, err
	}
	k.cmd.Dir = cwd
	k.cmd.Stdout = logFile
	stderr, err := k.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if k.started, err = FSNow(cfg.Dir); err != nil {
		return nil, err
	}
	if err := k.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		// The log is read to its end before Wait, which closes the pipe.
		k.readLog(stderr, logFile)
		k.waitErr = k.cmd.Wait()
		close(k.exited)
	}()
	if err = k.awaitHealthy(ctx, ports[0], ports[1]); err == nil {
		err = k.awaitWatch(ctx)
	}
	if err != nil {
		undo = nil // Stop undoes it all now
		return nil, errors.Join(err, k.Stop())
	}
	return k, nil
}

// awaitWatch returns once the kubelet's file source has read a file on a
// watch event: until its watch is up, a change reaches it only at a relist.
// The probe is no manifest, so it names no pod; it is written again after
// every relist until a watch read comes, and removed at the end.
func (k *Kubelet) awaitWatch(ctx context.Context) error {
	probe := filepath.Join(k.Manifests, "watch-probe")
	defer os.Remove(probe)
	for relists := -1; ; {
		s, err := k.hist.Wait(ctx, func(s Snapshot) bool { return s.WatchRead(probe) || len(s.Relists) != relists })
		if err != nil {
			return fmt.Errorf("the kubelet's watch of %s: %w", k.Manifests, err)
		}
		if s.WatchRead(probe) {
			return nil
		}
		relists = len(s.Relists)
		if err := os.WriteFile(probe, []byte("not a manifest: the harness's watch probe\n"), 0o644); err != nil {
			return err
		}
	}
}

// config is the KubeletConfiguration: the static pod folder and the fake
// CRI, its own ports on loopback, and off everything that would touch the
// host beyond its mount namespace or fail against a fake runtime. The
// FlexVolume plugin folder, which the kubelet makes at start, is in the
// run folder.
func config(manifests, plugins, endpoint string, period time.Duration, port, healthz int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: %q
volumePluginDir: %q
fileCheckFrequency: %s
containerRuntimeEndpoint: %q
imageServiceEndpoint: %q
address: 127.0.0.1
port: %d
healthzBindAddress: 127.0.0.1
healthzPort: %d
# No unauthenticated port; and in standalone mode there is no API server
# to ask for webhook authentication or authorization.
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
# These machines run cgroup v1, which the kubelet refuses by default. The
# fake runtime creates no cgroups; the kubelet should create none either.
failCgroupV1: false
cgroupsPerQOS: false
cgroupDriver: cgroupfs
enforceNodeAllocatable: []
failSwapOn: false
# Nothing of the host's: no resolv.conf for pods, no iptables chains.
resolvConf: ""
makeIPTablesUtilChains: false
# A test machine's disk may be fuller than the default thresholds allow,
# and eviction would stop pods for reasons no manifest gives.
evictionHard: {}
# Scenarios run side by side on one kubelet, each with its barrier pods:
# more than the default 110, past which the kubelet admits no pod.
maxPods: 1000
`, manifests, plugins, period, endpoint, endpoint, port, healthz)
}

// freePorts are n loopback ports free a moment ago, chosen below the
// kernel's ephemeral range: a port from that range can be taken before the
// kubelet binds it by any connection made meanwhile (the harness's own
// healthz polls, the API clients of other tests), which picks its local
// port there.
func freePorts(n int) ([]int, error) {
	lo, err := ephemeralLow()
	if err != nil {
		return nil, err
	}
	const floor = 20000 // above the well-known and registered ports in use
	if lo <= floor+n {
		return nil, fmt.Errorf("the ephemeral port range starts at %d, too low to choose ports below it", lo)
	}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no free loopback port in [%d, %d) after %d tries", floor, lo, tries)
		}
		p := floor + rand.IntN(lo-floor)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil || slices.Contains(ports, p) {
			continue
		}
		defer l.Close()
		ports = append(ports, p)
	}
	return ports, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() (int, error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, fmt.Errorf("ip_local_port_range %q: want two ports", b)
	}
	return strconv.Atoi(f[0])
}

// exitedEarly is the error of a kubelet that exited before it was healthy,
// with the end of its log, which its run folder may not outlive.
func (k *Kubelet) exitedEarly() error {
	tail := k.LogTail(20)
	err := fmt.Errorf("the kubelet exited before it was healthy: %v (log: %s, its end:\n%s)", k.waitErr, k.Log, tail)
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

// awaitHealthy polls the kubelet's healthz until it answers 200 and its
// server until it completes a TLS handshake, or the kubelet exits, says
// its healthz port is taken, or ctx ends. Healthz alone is no sign that
// the server port is bound: the kubelet binds the two in goroutines of
// their own, and the one of the server exits the kubelet when its port is
// taken, possibly after healthz answers and even after its watch is up.
func (k *Kubelet) awaitHealthy(ctx context.Context, port, healthz int) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", healthz)
	server := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	healthy, serving := false, false
	for {
		if !healthy {
			healthy = answersOK(ctx, url)
		}
		if !serving {
			serving = servesTLS(ctx, server)
		}
		if healthy && serving {
			return nil
		}
		// A fresh wait after the probes, not a ticker: a tick during a
		// probe stalled on a taken port would stand ready beside the
		// kubelet's word of it, and select picks either.
		select {
		case <-k.exited:
			return k.exitedEarly()
		case <-k.healthzTaken:
			return fmt.Errorf("%w: the kubelet could not bind its healthz port (log: %s): %s", errPortTaken, k.Log, k.healthzErr)
		case <-ctx.Done():
			return fmt.Errorf("the kubelet was not healthy in time (log: %s): %w", k.Log, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// answersOK reports whether a GET of url answers 200.
func answersOK(ctx context.Context, url string) bool {
	// A holder of the port that never answers would stall the request.
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// servesTLS reports whether a TLS server completes a handshake on addr, as
// the kubelet's server does with its self-signed certificate. A connection
// alone would prove nothing: the kernel accepts one for whoever holds a
// taken port, even a listener that never calls accept, while the kubelet
// that could not bind it is on its way out. Nothing is sent over it, so
// its certificate goes unchecked.
func servesTLS(ctx context.Context, addr string) bool {
	// A holder of the port that never answers would stall the handshake.
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// syncLoopLine matches the kubelet's klog text line for a config update
// reaching its sync loop, e.g.
// I0102 15:04:05.000000 1 kubelet.go:2760] "SyncLoop ADD" source="file" pods=["ns/a"]
var syncLoopLine = regexp.MustCompile(`"SyncLoop (ADD|UPDATE|REMOVE|DELETE)" source="([^"]*)" pods=\[([^\]]*)\]`)

// relistLine matches the line the kubelet logs for RelistClock, e.g.
// E0102 15:04:05.000000 1 file.go:174] "Provided manifest path is a directory, not recursing into manifest path" path="/d/manifests/!relist-clock"
var relistLine = regexp.MustCompile(`^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d{6}) .*"Provided manifest path is a directory, not recursing into manifest path" path="([^"]*)"`)

// missingLine matches the line the kubelet logs when a full list finds
// staticPodPath missing (it then sends its sync loop an empty pod list), e.g.
// E0102 15:04:05.000000 1 file.go:101] "Unable to read config path" err="path does not exist, ignoring" path="/d/manifests"
// Its watch logs the same when it starts on a missing path, which a
// kubelet whose folder existed at start never does: once the folder is
// gone its watch is gone for good, and only relists say it.
var missingLine = regexp.MustCompile(`^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d{6}) .*"Unable to read config path" err="path does not exist, ignoring" path="([^"]*)"`)

// readLine matches the line the kubelet's file source logs (at -v=3) for
// each manifest file it reads, on a relist and on a watch event alike, e.g.
// I0102 15:04:05.000000 1 file.go:200] "Reading config file" path="/d/manifests/a.yaml"
var readLine = regexp.MustCompile(`^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d{6}) .*"Reading config file" path="([^"]*)"`)

// failedLine matches the line the kubelet's file source logs when a relist
// cannot make a pod of a file it read (the relist then leaves that file's
// pod out), its error led by the file's path; one deleted between the
// relist's glob and its read fails too, and is the watch's to drop, e.g.
// E0102 15:04:05.000000 1 file.go:186] "Could not process manifest file" err="/d/manifests/a.yaml: couldn't parse as pod(...)"
var failedLine = regexp.MustCompile(`"Could not process manifest file" err="([^"]*?): `)

// mergeLine matches the line the kubelet's pod config logs (at -v=4) as
// it merges one update of a source, e.g.
// I0102 15:04:05.000000 1 config.go:230] "Setting pods for source" source="file"
// Merges run one at a time, so the "Receiving a new pod" lines after it
// (newLine) are that source's until the next merge.
var mergeLine = regexp.MustCompile(`^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d{6}) .*"Setting pods for source" source="([^"]*)"`)

// newLine matches the line the merge logs for each pod it adds, e.g.
// I0102 15:04:05.000000 1 config.go:330] "Receiving a new pod" pod="ns/a"
var newLine = regexp.MustCompile(`^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d{6}) .*"Receiving a new pod" pod="([^"]*)"`)

// workerLine matches the lines the pod workers log (at -v=4) when the
// sync loop hands them a pod to create (its ADD) or to kill (its REMOVE),
// one of them for every such pod whatever state its worker is in, e.g.
// I0102 15:04:05.000000 1 pod_workers.go:994] "Notifying pod of pending update" pod="ns/a" podUID="0123abcd" updateType="create" workType="sync"
var workerLine = regexp.MustCompile(`"(?:Pod is being synced for the first time|Pod is terminating but has been requested to restart with same UID, will be reconciled later|Pod is finished processing, no further updates|Pod is being removed by the kubelet, begin teardown|Notifying pod of pending update)" pod="([^"]*)" podUID="([^"]*)" updateType="(create|kill)"`)

// healthzTakenLine matches the line the kubelet logs when its healthz
// port is taken, e.g.
// E0102 15:04:05.000000 1 server.go:996] "Failed to start healthz server" err="listen tcp 127.0.0.1:10248: bind: address already in use"
var healthzTakenLine = regexp.MustCompile(`"Failed to start healthz server" err="[^"]*address already in use`)

// headerTime matches the time in a klog line's header.
var headerTime = regexp.MustCompile(`^[IWEF](\d{4} \d\d:\d\d:\d\d\.\d{6}) `)

// logTime is a klog header's time. The header has no year: this one's is
// assumed, and the zone is the local one klog writes in.
func logTime(stamp string) (time.Time, error) {
	t, err := time.ParseInLocation("0102 15:04:05.000000", stamp, time.Local)
	if err != nil {
		return t, err
	}
	return t.AddDate(time.Now().Year(), 0, 0), nil
}

// readLog copies the kubelet's stderr to w and records its SyncLoop lines.
func (k *Kubelet) readLog(r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	// The file source logs a relist's entries in sorted order, RelistClock
	// first and RelistEnd last; a read between them is the relist's.
	inRelist := false
	var held *Read // a relist's read, until the file source's next line
	merging := ""  // the source of the merge last begun
	// The file source's ADD and REMOVE lines, by pod, whose UID the pod
	// workers have not logged yet: the sync loop hands them each pod after
	// its line and before its next one, so a pod it did not hand them (one
	// it did not admit, or a REMOVE before its sources were ready) is
	// forgotten at the next line.
	type unhandled struct {
		loop   int
		update string // the pod workers' updateType: create or kill
	}
	pending := map[string]unhandled{}
	healthzTaken := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(w, line)
		if !healthzTaken && healthzTakenLine.MatchString(line) {
			healthzTaken = true
			k.healthzErr = line
			close(k.healthzTaken)
		}
		// A relist's read is recorded once the file source goes on to
		// its next entry (a read, or a relist clock), or says it could
		// not make a pod of it: the History's reads are shared with
		// snapshots and never change once added. Other goroutines' lines
		// come between on a loaded kubelet, so the failure need not be
		// the line right after the read.
		if held != nil {
			switch m := failedLine.FindStringSubmatch(line); {
			case m != nil && m[1] == held.Path:
				held.Failed = !strings.Contains(line, "no such file or directory")
				k.hist.addRead(*held)
				held = nil
			case readLine.MatchString(line) || relistLine.MatchString(line) || missingLine.MatchString(line):
				k.hist.addRead(*held)
				held = nil
			}
		}
		// A relist is dated by the kubelet's own clock, not by when this
		// pipe delivered the line: whether a relist began before or after
		// a step is what a scenario waits on.
		if m := relistLine.FindStringSubmatch(line); m != nil && (m[2] == k.RelistClock || m[2] == k.RelistEnd) {
			if at, err := logTime(m[1]); err == nil {
				k.hist.addRelist(at, m[2] == k.RelistEnd)
			}
			inRelist = m[2] == k.RelistClock
			continue
		}
		if m := missingLine.FindStringSubmatch(line); m != nil && strings.TrimSuffix(m[2], "/") == k.Manifests {
			if at, err := logTime(m[1]); err == nil {
				k.hist.addMissingRelist(at)
			}
			inRelist = false
			continue
		}
		if m := mergeLine.FindStringSubmatch(line); m != nil {
			merging = m[2]
			if at, err := logTime(m[1]); err == nil && merging == "file" {
				k.hist.addMerge(at)
			}
			continue
		}
		if m := newLine.FindStringSubmatch(line); m != nil {
			if at, err := logTime(m[1]); err == nil && merging == "file" {
				k.hist.addAdded(Added{At: at, Pod: m[2]})
			}
			continue
		}
		if m := readLine.FindStringSubmatch(line); m != nil {
			k.noteHostPaths(m[2])
			if at, err := logTime(m[1]); err == nil {
				if rd := (Read{At: at, Path: m[2], Relist: inRelist}); inRelist {
					held = &rd
				} else {
					k.hist.addRead(rd)
				}
			}
			continue
		}
		if m := workerLine.FindStringSubmatch(line); m != nil {
			if u, ok := pending[m[1]]; ok && u.update == m[3] {
				k.hist.addHandled(Handled{Loop: u.loop, Pod: m[1], UID: m[2]})
				delete(pending, m[1])
			}
			continue
		}
		m := syncLoopLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var pods []string
		for p := range strings.SplitSeq(m[3], ",") {
			if p = strings.Trim(strings.TrimSpace(p), `"`); p != "" {
				pods = append(pods, p)
			}
		}
		at := time.Now()
		if h := headerTime.FindStringSubmatch(line); h != nil {
			if t, err := logTime(h[1]); err == nil {
				at = t
			}
		}
		loop := k.hist.addLoop(SyncLoop{At: at, Op: m[1], Source: m[2], Pods: pods})
		clear(pending)
		if update := map[string]string{"ADD": "create", "REMOVE": "kill"}[m[1]]; update != "" && m[2] == "file" {
			for _, p := range pods {
				pending[p] = unhandled{loop, update}
			}
		}
	}
	if held != nil {
		k.hist.addRead(*held)
	}
	_, _ = io.Copy(w, r) // a line too long for the scanner: keep the rest
}

// Stop ends the kubelet (SIGTERM, then SIGKILL after 10s) and the fake
// CRI. The kubelet's mount namespace, and with it every tmpfs and bind
// mount, goes with its process.
func (k *Kubelet) Stop() error {
	defer func() {
		k.cri.stop()
		k.closeLogs()
	}()
	select {
	case <-k.exited:
		return nil
	default:
	}
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.exited:
	case <-time.After(10 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.exited
	}
	var exit *exec.ExitError
	if errors.As(k.waitErr, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() {
		return nil // SIGTERM ends the kubelet without a clean exit code
	}
	return k.waitErr
}

// Intercept puts i around every later call to the fake CRI (nil: none),
// for a test that drives the runtime: a pull that fails, a stop that
// takes time, a container that exits.
func (k *Kubelet) Intercept(i Interceptor) {
	k.cri.mu.Lock()
	defer k.cri.mu.Unlock()
	k.cri.icpt = i
}

// InNamespace is the path by which this process reaches path as the
// kubelet sees it in its mount namespace (its root dir, /var/lib/kubelet,
// is a tmpfs there): to write what a container would have written, such
// as its termination message.
func (k *Kubelet) InNamespace(path string) string {
	return fmt.Sprintf("/proc/%d/root%s", k.cmd.Process.Pid, path)
}

// Runtime is the fake runtime service's state, for a test that changes a
// container's state under the kubelet; hold its lock while doing so.
func (k *Kubelet) Runtime() *apitesting.FakeRuntimeService { return k.cri.fake.RuntimeService }
