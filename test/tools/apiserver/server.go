package apiserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Static bearer tokens (--token-auth-file). Tests make their own identities
// for anything else (ServiceAccounts via the TokenRequest API).
const (
	AdminToken    = "admin-token"    // user "admin" in system:masters
	PodwatchToken = "podwatch-token" // user "podwatch", no groups: RBAC decides
	NobodyToken   = "nobody-token"   // user "nobody", never granted anything
	PodwatchUser  = "podwatch"
)

// readyTimeout bounds a start: etcd and kube-apiserver take a few seconds,
// far more under the race detector on two cores.
const readyTimeout = 2 * time.Minute

// Server is a running etcd and kube-apiserver pair.
type Server struct {
	t       testing.TB
	dir     string
	bin     Binaries
	pki     *pki
	port    int
	args    []string
	etcdURL string

	mu   sync.Mutex
	etcd *proc
	kube *proc
}

// proc is one running program with its log.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it exits
	err  error         // set before done closes
	log  string
}

// Start runs etcd and kube-apiserver for t, waits until /readyz answers ok
// and stops both when t ends. It fails t when they cannot start.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := BuildBinaries()
	if err != nil {
		t.Fatalf("building test binaries: %v", err)
	}
	dir := t.TempDir()
	p, err := writePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	tokens := fmt.Sprintf("%s,admin,admin-uid,\"system:masters\"\n%s,%s,podwatch-uid\n%s,nobody,nobody-uid\n",
		AdminToken, PodwatchToken, PodwatchUser, NobodyToken)
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, dir: dir, bin: bin, pki: p, port: ports[2],
		etcdURL: "http://127.0.0.1:" + strconv.Itoa(ports[0])}
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	t.Cleanup(s.stopAll)

	etcdArgs := []string{
		"--name=default",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + s.etcdURL,
		"--advertise-client-urls=" + s.etcdURL,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--unsafe-no-fsync=true", // a test's data need not survive a crash
		"--log-level=warn",
	}
	s.etcd, err = s.spawn("etcd", bin.Etcd, etcdArgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.waitHTTP(s.etcd, http.DefaultClient, s.etcdURL+"/health", ""); err != nil {
		t.Fatalf("etcd not healthy: %v\n%s", err, readLog(s.etcd))
	}

	s.args = []string{
		"--etcd-servers=" + s.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.port),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--tls-cert-file=" + p.certFile,
		"--tls-private-key-file=" + p.keyFile,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.saKeyFile,
		"--service-account-signing-key-file=" + p.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		// Bound to loopback, the default reconciler would publish 127.0.0.1
		// as the kubernetes Service endpoint and refuse to.
		"--endpoint-reconciler-type=none",
		"--event-ttl=1h",
		"--profiling=false",
	}
	if err := s.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	return s
}

// StartAPIServer (re)starts kube-apiserver on the same port and etcd, and
// waits until it is ready.
func (s *Server) StartAPIServer() error {
	s.mu.Lock()
	running := s.kube != nil
	s.mu.Unlock()
	if running {
		return errors.New("kube-apiserver already running")
	}
	p, err := s.spawn("kube-apiserver", s.bin.KubeAPIServer, s.args)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.kube = p
	s.mu.Unlock()
	hc, err := s.httpClient()
	if err != nil {
		return err
	}
	if err := s.waitHTTP(p, hc, s.URL()+"/readyz", AdminToken); err != nil {
		return fmt.Errorf("kube-apiserver not ready: %w\n%s", err, readLog(p))
	}
	return nil
}

// StopAPIServer stops kube-apiserver (etcd keeps running) and waits for it
// to exit.
func (s *Server) StopAPIServer() {
	s.mu.Lock()
	p := s.kube
	s.kube = nil
	s.mu.Unlock()
	stop(p)
}

// PauseAPIServer stops kube-apiserver with SIGSTOP: its port stays open
// and requests hang, as behind a network partition, until ResumeAPIServer.
func (s *Server) PauseAPIServer() error { return s.signalAPIServer(syscall.SIGSTOP) }

// ResumeAPIServer continues a paused kube-apiserver.
func (s *Server) ResumeAPIServer() error { return s.signalAPIServer(syscall.SIGCONT) }

func (s *Server) signalAPIServer(sig syscall.Signal) error {
	s.mu.Lock()
	p := s.kube
	s.mu.Unlock()
	if p == nil {
		return errors.New("kube-apiserver not running")
	}
	return p.cmd.Process.Signal(sig)
}

func (s *Server) stopAll() {
	s.StopAPIServer()
	s.mu.Lock()
	p := s.etcd
	s.etcd = nil
	s.mu.Unlock()
	stop(p)
	if s.t.Failed() {
		s.t.Logf("kube-apiserver log: %s", filepath.Join(s.dir, "kube-apiserver.log"))
	}
}

func stop(p *proc) {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused one cannot act on the interrupt
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// URL is the API server's address.
func (s *Server) URL() string { return "https://127.0.0.1:" + strconv.Itoa(s.port) }

// Config returns a client config authenticating with token.
func (s *Server) Config(token string) *rest.Config {
	return &rest.Config{
		Host:            s.URL(),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.pki.caPEM},
		QPS:             100,
		Burst:           200,
	}
}

// WriteKubeconfig writes a kubeconfig for token into the test's directory
// and returns its path.
func (s *Server) WriteKubeconfig(token string) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: s.URL(), CertificateAuthorityData: s.pki.caPEM}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "user"}
	cfg.CurrentContext = "test"
	f, err := os.CreateTemp(s.dir, "kubeconfig-*")
	if err != nil {
		return "", err
	}
	f.Close()
	if err := clientcmd.WriteToFile(*cfg, f.Name()); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return f.Name(), nil
}

func (s *Server) httpClient() (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.pki.caPEM) {
		return nil, errors.New("bad CA")
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}, nil
}

// spawn starts a program with its output in <dir>/<name>.log.
func (s *Server) spawn(name, bin string, args []string) (*proc, error) {
	logName := filepath.Join(s.dir, name+".log")
	logf, err := os.OpenFile(logName, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: logName}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// waitHTTP polls url until it answers 200, the process exits, or
// readyTimeout passes. Polling a readiness endpoint is the synchronisation:
// there is nothing to be told by.
func (s *Server) waitHTTP(p *proc, hc *http.Client, url, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err == nil {
			body := make([]byte, 512)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(body[:n]))
		}
		last = err
		select {
		case <-p.done:
			return fmt.Errorf("exited: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("timed out after %v: %w", readyTimeout, last)
		case <-tick.C:
		}
	}
}

func readLog(p *proc) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// freePorts reserves n distinct loopback ports by listening on port 0,
// and releases them for the servers to take.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Kubectl runs the kubectl built beside the API server, authenticated with
// token, and returns what it printed; an error carries its stderr.
func (s *Server) Kubectl(ctx context.Context, token string, args ...string) (string, error) {
	kubeconfig, err := s.WriteKubeconfig(token)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, s.bin.Kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// CAPEM is the CA that signed the API server's serving certificate, as a
// pod finds it in its service account's ca.crt.
func (s *Server) CAPEM() []byte { return append([]byte(nil), s.pki.caPEM...) }

// Port is the API server's port on 127.0.0.1.
func (s *Server) Port() int { return s.port }
