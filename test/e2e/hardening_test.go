package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podwatch/podwatch/pkg/published"

	v1 "k8s.io/api/core/v1"

	"github.com/podwatch/podwatch/pkg/agent"
)

// loggedAgent is startAgent with the debug log captured as JSON, the
// metrics address known and the state dir returned.
type loggedAgent struct {
	*runningAgent
	logs     *lockedBuffer
	stateDir string
	metrics  string // http://host:port
}

func startLoggedAgent(t *testing.T, path string) *loggedAgent {
	t.Helper()
	la := &loggedAgent{logs: &lockedBuffer{}, stateDir: filepath.Join(t.TempDir(), "state")}
	addrs := make(chan net.Addr, 1)
	log := slog.New(slog.NewJSONHandler(la.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	la.runningAgent = startAgentLogging(t, path, log, func(o *agent.Options) {
		o.Source.FileCheckFrequency = 200 * time.Millisecond
		o.StateDir = la.stateDir
		o.OnMetricsListen = func(a net.Addr) { addrs <- a }
	})
	select {
	case a := <-addrs:
		la.metrics = "http://" + a.String()
	case <-time.After(5 * time.Second):
		t.Fatal("metrics server never listened")
	}
	return la
}

// secretPod is a manifest with secrets in every place operators put them.
// v selects the secret values (and the image), so an UPDATE changes them all.
func secretPod(v string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: vault
  namespace: kube-system
  annotations:
    example.com/api-key: ann%[1]s-s3cr3t
    example.com/tls-key: |
      -----BEGIN PRIVATE KEY-----
      MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC%[1]sprivkey
      -----END PRIVATE KEY-----
spec:
  containers:
  - name: vault
    image: hashicorp/vault:1.%[1]s
    command: [vault, server, --token=tok%[1]s-s3cr3t]
    args: [--password=pw%[1]s-s3cr3t, --api-key, key%[1]s-s3cr3t]
    env:
    - name: PASSWORD
      value: hunter%[1]s-s3cr3t
    - name: DB_URL
      value: postgres://admin:dburl%[1]s-s3cr3t@db:5432/x
    livenessProbe:
      httpGet:
        port: 8200
        httpHeaders: [{name: Authorization, value: Bearer hdr%[1]s-s3cr3t}]
`, v)
}

func secretsOf(v string) []string {
	return []string{
		"ann" + v + "-s3cr3t", v + "privkey", "tok" + v + "-s3cr3t", "pw" + v + "-s3cr3t", "key" + v + "-s3cr3t",
		"hunter" + v + "-s3cr3t", "dburl" + v + "-s3cr3t", "hdr" + v + "-s3cr3t",
	}
}

// TestSecretsNeverLeaveTheNode plants secrets in manifests, drives them
// through ADD, UPDATE, invalid variants and a Secret object dropped into the
// folder, and checks no secret is in an event, a log line, a metric or the
// local event log.
func TestSecretsNeverLeaveTheNode(t *testing.T) {
	dir := t.TempDir()
	secrets := append(secretsOf("2"), secretsOf("3")...)

	a := startLoggedAgent(t, dir)
	a.waitFirstList()
	writeByRename(t, dir, "vault.yaml", secretPod("2"))
	// A Secret object: never a pod, never dumped.
	objSecrets := []string{"obj-s3cr3t", "strdata-s3cr3t"}
	secrets = append(secrets, objSecrets...)
	secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte("obj-s3cr3t")))
	writeByRename(t, dir, "creds.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: kube-system\ntype: Opaque\ndata:\n  password: "+
		base64.StdEncoding.EncodeToString([]byte("obj-s3cr3t"))+"\nstringData:\n  token: strdata-s3cr3t\n")
	a.waitEvent("StaticPodAdded", "vault.yaml")
	a.waitEvent("InvalidManifest", "creds.yaml")

	// UPDATE: every secret and the image change; its detail names the
	// fields, the image with its values, the secrets without.
	writeByRename(t, dir, "vault.yaml", secretPod("3"))
	up := a.waitEvent("StaticPodUpdated", "vault.yaml")
	detail := up.Annotations["podwatch.io/detail"]
	for _, field := range []string{"image: hashicorp/vault:1.2 -> hashicorp/vault:1.3", "env", "command", "args", "metadata.annotations"} {
		if !strings.Contains(detail, field) {
			t.Errorf("UPDATE detail does not name %q: %s", field, detail)
		}
	}

	// Invalid variants, each next to the secrets.
	invalid := map[string]string{
		"bad-image.yaml": strings.Replace(strings.Replace(secretPod("3"), "name: vault\n  namespace", "name: vault2\n  namespace", 1),
			"image: hashicorp/vault:1.3", "image: \"hashicorp/vault:1.3 \"", 1),
		"bad-env-name.yaml": strings.Replace(strings.Replace(secretPod("3"), "name: vault\n  namespace", "name: vault3\n  namespace", 1),
			"name: PASSWORD", "name: \"PASS=WORD\"", 1),
		"env-as-string.yaml": strings.Replace(manifestYAML("envstr", "nginx"), "    image: nginx\n",
			"    image: nginx\n    env: \"PASSWORD=envstr-s3cr3t\"\n", 1),
		"args-as-map.yaml": strings.Replace(manifestYAML("argmap", "nginx"), "    image: nginx\n",
			"    image: nginx\n    args: {--token: argmap-s3cr3t}\n", 1),
		"yaml-error.yaml": strings.Replace(manifestYAML("yerr", "nginx"), "    image: nginx\n",
			"    image: nginx\n    args: [--token=yerr-s3cr3t, \"unterminated\n", 1),
		"typo-field.yaml": strings.Replace(manifestYAML("typo", "nginx"), "    image: nginx\n",
			"    image: nginx\n    env:\n    - name: TOKEN\n      valeu: typo-s3cr3t\n", 1),
		"anno-number.yaml": strings.Replace(manifestYAML("annonum", "nginx"), "  namespace: kube-system\n",
			"  namespace: kube-system\n  annotations:\n    example.com/pin: 987654321012\n", 1),
	}
	secrets = append(secrets, "envstr-s3cr3t", "argmap-s3cr3t", "yerr-s3cr3t", "typo-s3cr3t", "987654321012")
	for name, content := range invalid {
		writeByRename(t, dir, name, content)
	}
	for _, name := range []string{"bad-image.yaml", "bad-env-name.yaml", "env-as-string.yaml", "args-as-map.yaml", "yaml-error.yaml"} {
		a.waitEvent("InvalidManifest", name+" is invalid")
	}
	a.waitEvent("ManifestIgnoredContent", "typo-field.yaml")
	// And the pod removed by turning invalid (the REMOVE says why).
	writeByRename(t, dir, "vault.yaml", strings.Replace(secretPod("3"), "image: hashicorp/vault:1.3", "image: \"\"", 1))
	a.waitEvent("StaticPodRemoved", "vault.yaml")
	// A pod with secrets stays published, so state.json holds one.
	secrets = append(secrets, secretsOf("4")...)
	writeByRename(t, dir, "vault4.yaml", strings.Replace(secretPod("4"), "name: vault\n  namespace", "name: vault4\n  namespace", 1))
	a.waitEvent("StaticPodAdded", "vault4.yaml")
	a.quiesce()

	_, metrics := get(t, a.metrics+"/metrics")
	a.shutdown() // flushes the store
	stateFiles := stateFilesOf(t, a.stateDir)
	var stateJSON []byte
	for _, f := range stateFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stateJSON = append(stateJSON, b...)
	}
	eventsLog, err := os.ReadFile(filepath.Join(a.stateDir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	where := map[string]string{
		"stdout events": a.out.String(),
		"logs":          a.logs.String(),
		"/metrics":      metrics,
		"events.log":    string(eventsLog),
		"state files":   string(stateJSON),
	}
	for what, text := range where {
		if len(text) == 0 {
			t.Errorf("%s is empty: the check would prove nothing", what)
		}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				i := strings.Index(text, s)
				t.Errorf("%s contains secret %q: ...%s...", what, s, text[max(0, i-200):min(len(text), i+len(s)+50)])
			}
		}
	}
	// The store holds the messages as text, so the search above can find
	// a leak there; and the UPDATE reached it, naming the fields.
	if !strings.Contains(string(eventsLog), "env[PASSWORD].value: changed") {
		t.Errorf("events.log does not hold the UPDATE message as text: the secret search there proves nothing")
	}

	// The state files hold the published pods with digests for secret
	// values, and still only on the node, root-only. Assert it stays so.
	for _, f := range stateFiles {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s mode %v: readable by others", filepath.Base(f), fi.Mode().Perm())
		}
	}
	di, err := os.Stat(a.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm()&0o077 != 0 {
		t.Errorf("state dir mode %v: want no access for group/others", di.Mode().Perm())
	}
	for _, s := range objSecrets {
		if bytes.Contains(stateJSON, []byte(s)) {
			t.Errorf("the state files hold a value of the Secret object, which is not a published pod: %q", s)
		}
	}
	// The search above proves something only if the state files hold the pods.
	if !bytes.Contains(stateJSON, []byte(`"name":"PASSWORD"`)) || !bytes.Contains(stateJSON, []byte("hashicorp/vault:1.4")) ||
		!bytes.Contains(stateJSON, []byte("podwatch-digest:")) {
		t.Errorf("the state files lack the published pods' env names or digests:\n%s", stateJSON)
	}
}

// stateFilesOf lists state.json and the pod shards in dir.
func stateFilesOf(t *testing.T, dir string) []string {
	t.Helper()
	shards, err := filepath.Glob(filepath.Join(dir, "pods-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != published.PodShards {
		t.Fatalf("%d pod shards in the state dir, want %d", len(shards), published.PodShards)
	}
	return append([]string{filepath.Join(dir, published.StateFile)}, shards...)
}

// TestSpecialFilesNeverBlock drops a FIFO, a unix socket and (as root) a
// character device into the folder: the first list takes a FIFO in, and
// manifests written before, between and after the others keep being added,
// and relists keep running.
func TestSpecialFilesNeverBlock(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "b-fifo.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startLoggedAgent(t, dir)
	a.waitFirstList()
	writeByRename(t, dir, "a.yaml", manifestYAML("a", "nginx:1.29"))
	a.waitEvent("StaticPodAdded", "a.yaml")

	// A socket with a listener that accepts nothing, in the manifest folder.
	// The unix path limit is ~108 bytes; temp dirs can be longer.
	sock := filepath.Join(dir, "c-sock.yaml")
	if len(sock) < 100 {
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	} else {
		t.Logf("temp dir too long for a unix socket path: %s", sock)
	}
	nodes := 2
	if os.Geteuid() == 0 {
		if err := syscall.Mknod(filepath.Join(dir, "d-null.yaml"), syscall.S_IFCHR|0o666, int(unixMkdev(1, 3))); err != nil {
			t.Logf("mknod: %v (skipping the device node)", err)
		} else {
			nodes++
		}
	} else {
		t.Log("not root: no device node")
	}
	// A FIFO created while the watch runs, with a writer blocked on it.
	fifo2 := filepath.Join(dir, "e-fifo.yaml")
	if err := syscall.Mkfifo(fifo2, 0o600); err != nil {
		t.Fatal(err)
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		// Opening for write blocks until a reader opens: podwatch must not be it.
		f, err := os.OpenFile(fifo2, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
	}()
	defer func() {
		// Unblock the writer: open the read side ourselves.
		if f, err := os.OpenFile(fifo2, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-writerDone
			f.Close()
		}
	}()

	writeByRename(t, dir, "f.yaml", manifestYAML("f", "nginx:1.29"))
	a.waitEvent("StaticPodAdded", "f.yaml")
	if err := os.WriteFile(filepath.Join(dir, "g.yaml"), []byte(manifestYAML("g", "nginx:1.29")), 0o600); err != nil {
		t.Fatal(err)
	}
	a.waitEvent("StaticPodAdded", "g.yaml")
	// Relists go on with the special files there: an invalid file's count
	// grows once per relist.
	writeByRename(t, dir, "h-bad.yaml", "kind: Pod\n")
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int32
		for _, ev := range a.out.events(t) {
			if ev.Reason == "InvalidManifest" && strings.Contains(ev.Message, "h-bad.yaml") {
				n = max(n, ev.Count)
			}
		}
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("relists stalled (InvalidManifest count %d):\n%s", n, a.dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, sockErr := os.Stat(sock); sockErr == nil {
		nodes++
	}
	waitMetric(t, a.metrics, fmt.Sprintf(`podwatch_manifests{state="not_regular"} %d`, nodes))
	// The kubelet skips what is not a regular file: no pod, no verdict.
	for _, ev := range a.out.events(t) {
		for _, name := range []string{"b-fifo", "c-sock", "d-null", "e-fifo"} {
			if strings.Contains(ev.Message, name) && (ev.Reason == "InvalidManifest" || strings.HasPrefix(ev.Reason, "StaticPod")) {
				t.Errorf("special file %s gave %s: %s", name, ev.Reason, ev.Message)
			}
		}
	}
	select {
	case <-writerDone:
		t.Fatal("something opened the FIFO for reading: the agent must never open a FIFO")
	default:
	}
}

func unixMkdev(major, minor uint32) uint64 {
	return uint64(major)<<8 | uint64(minor)
}

// TestSIGTERMDuringBurst runs the real binary, writes 500 manifests and
// sends SIGTERM midway: exit 0 within --shutdown-timeout + 2s, and the local
// store reads back whole, holding every event printed on stdout.
func TestSIGTERMDuringBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildPodwatch(t, t.TempDir())
	dir, stateDir := t.TempDir(), filepath.Join(t.TempDir(), "state")
	writeByRename(t, dir, "first.yaml", manifestYAML("first", "nginx:1.29"))
	const shutdownTimeout = 3 * time.Second
	cmd := exec.Command(bin, "--path", dir, "--state-dir", stateDir, "--node-name", testNode, "-o", "json",
		"--metrics-bind-address", "0", "--settle-delay", "100ms", "--shutdown-timeout", shutdownTimeout.String())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var lines []string
	var mu sync.Mutex
	firstAdd := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			if strings.Contains(sc.Text(), "first.yaml") {
				once.Do(func() { close(firstAdd) })
			}
		}
	}()
	select {
	case <-firstAdd:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("agent never announced first.yaml; stderr:\n%s", stderr.String())
	}

	var sentAt time.Time
	for i := range 500 {
		name := fmt.Sprintf("burst-%03d.yaml", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(manifestYAML(fmt.Sprintf("burst-%03d", i), "nginx:1.29")), 0o600); err != nil {
			t.Fatal(err)
		}
		if i == 250 {
			// Mid-burst: the agent is announcing the burst.
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				n := strings.Count(strings.Join(lines, "\n"), "burst-")
				mu.Unlock()
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("no burst manifest announced within 5s; stderr:\n%s", stderr.String())
				}
				time.Sleep(time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			sentAt = time.Now()
		}
	}
	go func() {
		<-readDone // stdout closes when the process exits; Wait must come after
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(shutdownTimeout + 2*time.Second - time.Since(sentAt)):
		_ = cmd.Process.Kill()
		t.Fatalf("no exit within --shutdown-timeout + 2s of SIGTERM; stderr:\n%s", stderr.String())
	}
	if took := time.Since(sentAt); took > shutdownTimeout+2*time.Second {
		t.Fatalf("exit took %v after SIGTERM", took)
	}

	// Every stdout line is a whole Event.
	printed := map[string]bool{}
	mu.Lock()
	for _, l := range lines {
		var ev v1.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("stdout line is not a whole Event: %v: %q", err, l)
		}
		if ev.Reason == "StaticPodAdded" {
			printed[ev.InvolvedObject.Name] = true
		}
	}
	mu.Unlock()
	if len(printed) < 2 {
		t.Fatalf("only %d ADDs printed: the burst was not under way at SIGTERM", len(printed))
	}

	// The store reads back whole through the binary.
	out, err := exec.Command(bin, "events", "--state-dir", stateDir, "-o", "json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("podwatch events: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var list v1.EventList
	if err := dec.Decode(&list); err != nil {
		t.Fatalf("podwatch events -o json does not decode: %v\n%s", err, out)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("trailing data after the EventList: %v", err)
	}
	stored := map[string]bool{}
	for _, ev := range list.Items {
		if ev.Reason == "" || ev.Message == "" || ev.Count < 1 || ev.InvolvedObject.Name == "" {
			t.Errorf("half an event in the store: %+v", ev)
		}
		if ev.Reason == "StaticPodAdded" {
			stored[ev.InvolvedObject.Name] = true
		}
	}
	for name := range printed {
		if !stored[name] {
			t.Errorf("ADD of %s printed on stdout but not in the store after a clean shutdown", name)
		}
	}
	// Every state file is whole JSON.
	for _, f := range stateFilesOf(t, stateDir) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(data) {
			t.Fatalf("%s is not whole JSON (%d bytes)", filepath.Base(f), len(data))
		}
	}
	t.Logf("SIGTERM after 251 writes: %d ADDs printed, %d events stored, exit %v after SIGTERM",
		len(printed), len(list.Items), time.Since(sentAt).Round(time.Millisecond))
}

// SIGHUP (a closed terminal, a supervisor's reload) is a shutdown like
// SIGTERM: pending writes flushed, the state saved, exit 0. Go's default
// would end the process at once with 129 and lose both.
func TestSIGHUPShutsDownCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildPodwatch(t, t.TempDir())
	dir, stateDir := t.TempDir(), filepath.Join(t.TempDir(), "state")
	p := runProcAgent(t, exec.Command(bin, "--path", dir, "--state-dir", stateDir, "--node-name", testNode, "-o", "json",
		"--metrics-bind-address", "0"))
	p.waitFirstList()
	writeByRename(t, dir, "web.yaml", manifestYAML("web", "nginx:1.29"))
	p.waitEvent("StaticPodAdded", "web.yaml")
	p.stopWith(syscall.SIGHUP) // fails the test on a non-zero exit or none in time
	if !strings.Contains(p.stderr.String(), "podwatch stopped") {
		t.Fatalf("no clean stop logged:\n%s", p.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(stateDir, published.StateFile)); err != nil {
		t.Fatalf("state not saved at SIGHUP: %v", err)
	}
}

// buildPodwatch builds the podwatch binary into dir, for tests that must
// run the process itself (signals, another uid).
func buildPodwatch(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "podwatch")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/podwatch/podwatch/cmd/podwatch").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
