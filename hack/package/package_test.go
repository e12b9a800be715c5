package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	rpmutils "github.com/sassoftware/go-rpmutils"
)

const (
	repoUnitPath   = "../../deploy/systemd/podwatch.service"
	repoFollowPath = "../../deploy/systemd/podwatch.service.d/follow.conf"
)

// buildPackages builds the agent as `make package` does and packages it.
func buildPackages(t *testing.T) (deb, rpm string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "podwatch")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -X main.version=test", "-o", bin, "./cmd/podwatch")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	paths, err := Build(Options{Binary: bin, Unit: repoUnitPath, Follow: repoFollowPath, Version: "v1.2.3", Arch: runtime.GOARCH,
		OutDir: t.TempDir(), MTime: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || !strings.HasSuffix(paths[0], ".deb") || !strings.HasSuffix(paths[1], ".rpm") {
		t.Fatalf("packages %v, want a .deb and an .rpm", paths)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != 0o644 {
			t.Fatalf("%s: %v %v, want mode 0644", p, fi.Mode(), err)
		}
	}
	return paths[0], paths[1]
}

// The package's unit is the repo's with one path changed, line for line.
func wantUnit(t *testing.T) []byte {
	t.Helper()
	repo, err := os.ReadFile(repoUnitPath)
	if err != nil {
		t.Fatal(err)
	}
	unit, err := PackageUnit(repo)
	if err != nil {
		t.Fatal(err)
	}
	rl, ul := strings.Split(string(repo), "\n"), strings.Split(string(unit), "\n")
	if len(rl) != len(ul) {
		t.Fatalf("unit: %d lines, the repo's %d", len(ul), len(rl))
	}
	changed := 0
	for i := range rl {
		if rl[i] != ul[i] {
			changed++
			if !strings.HasPrefix(ul[i], "ExecStart="+Binary+" ") || strings.Replace(rl[i], repoBinary, Binary, 1) != ul[i] {
				t.Fatalf("unit line %d: %q, from %q", i+1, ul[i], rl[i])
			}
		}
	}
	if changed != 1 {
		t.Fatalf("unit: %d lines changed, want the ExecStart alone", changed)
	}
	return unit
}

func TestPackageUnitRefusesAnUnknownExecStart(t *testing.T) {
	for _, unit := range []string{
		"[Service]\nExecStart=/opt/podwatch --path x\n",
		"[Service]\nExecStart=/usr/local/bin/podwatch a\nExecStart=/usr/local/bin/podwatch b\n",
		"[Service]\nExecStart=/usr/local/bin/podwatchd\n",
	} {
		if _, err := PackageUnit([]byte(unit)); err == nil {
			t.Errorf("PackageUnit(%q) succeeded", unit)
		}
	}
}

func TestPackageVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":                  "1.2.3",
		"v1.2.3-4-gabcdef0":       "1.2.3.4.gabcdef0",
		"v1.2.3-4-gabcdef0-dirty": "1.2.3.4.gabcdef0.dirty",
		"e00fff0":                 "0.0.0+e00fff0",
		"dev":                     "0.0.0+dev",
	} {
		if got := PackageVersion(in); got != want {
			t.Errorf("PackageVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// snapshot is a tree's paths with their type, mode, owner and content hash.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		desc := fi.Mode().String()
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			d = append(d, "removed "+p)
		} else if a != b {
			d = append(d, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "added "+p)
		}
	}
	sort.Strings(d)
	return d
}

// hostState is what installing podwatch on this host would change.
func hostState(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range []string{Binary, Config, Unit, FollowExample, "/lib/systemd/system/podwatch.service",
		"/var/lib/dpkg/status", "/var/lib/dpkg/info/podwatch.list", "/var/lib/private/podwatch", "/var/lib/podwatch"} {
		fi, err := os.Lstat(p)
		if err != nil {
			out[p] = "absent"
			continue
		}
		out[p] = fmt.Sprintf("%v %d %v", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
	}
	return out
}

// chrootRoot is an empty root dpkg can install into and run maintainer
// scripts in (it chroots into it): an empty dpkg database, /bin/sh, /bin/rm
// and their libraries, and a systemctl that records its arguments in /systemctl.log.
func chrootRoot(t *testing.T, withSystemd bool) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "bin", "usr/bin", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyIn := func(host string, mode os.FileMode) {
		data, err := os.ReadFile(host)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, host)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	// rm for the purge: an essential package, which a postrm may use.
	for _, bin := range []string{"/bin/sh", "/bin/rm"} {
		copyIn(bin, 0o755)
		ldd, err := exec.Command("ldd", bin).Output()
		if err != nil {
			t.Skipf("ldd %s: %v", bin, err)
		}
		for _, f := range strings.Fields(string(ldd)) {
			if strings.HasPrefix(f, "/") {
				copyIn(f, 0o755)
			}
		}
	}
	files := map[string]string{
		"var/lib/dpkg/status": "",
		"usr/bin/systemctl":   "#!/bin/sh\necho \"$*\" >>/systemctl.log\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if withSystemd {
		if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func dpkg(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("dpkg", append([]string{"--root=" + root, "--force-not-root"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dpkg %v: %v\n%s", args, err, out)
	}
}

func checkFile(t *testing.T, path string, mode os.FileMode, want []byte) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != mode {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode(), mode)
	}
	if want != nil {
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: content differs (%v)", path, err)
		}
	}
}

// TestDebInstallsAndPurges installs the .deb with the real dpkg into a
// private root, checks what landed, and purges it.
func TestDebInstallsAndPurges(t *testing.T) {
	if _, err := exec.LookPath("dpkg"); err != nil {
		t.Skip("no dpkg")
	}
	if os.Geteuid() != 0 {
		t.Skip("dpkg runs maintainer scripts in a chroot: needs root")
	}
	host := hostState(t)
	deb, _ := buildPackages(t)
	unit := wantUnit(t)
	for _, withSystemd := range []bool{false, true} {
		t.Run(fmt.Sprintf("systemd=%v", withSystemd), func(t *testing.T) {
			root := chrootRoot(t, withSystemd)
			before := snapshot(t, root)
			dpkg(t, root, "-i", deb)

			checkFile(t, filepath.Join(root, Binary), 0o755, nil)
			checkFile(t, filepath.Join(root, Unit), 0o644, unit)
			checkFile(t, filepath.Join(root, Config), 0o644, defaultConfig)
			follow, err := os.ReadFile(repoFollowPath)
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, filepath.Join(root, FollowExample), 0o644, follow)
			// Shipped inactive: no drop-in folder systemd reads.
			for _, d := range []string{"usr/lib/systemd/system/podwatch.service.d", "lib/systemd/system/podwatch.service.d", "etc/systemd/system/podwatch.service.d"} {
				if _, err := os.Lstat(filepath.Join(root, d)); err == nil {
					t.Errorf("the package made %s: the runtime access would be on", d)
				}
			}
			cfg := string(defaultConfig)
			for _, v := range []string{"\n#NODE_NAME=", "\n#PODWATCH_ARGS="} {
				if !strings.Contains(cfg, v) {
					t.Errorf("%s lacks the example %s", Config, v[1:])
				}
			}
			conffiles, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/info/podwatch.conffiles"))
			if err != nil || strings.TrimSpace(string(conffiles)) != Config {
				t.Errorf("conffiles %q (%v), want %s alone", conffiles, err, Config)
			}
			out, err := exec.Command(filepath.Join(root, Binary), "version").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "test") {
				t.Errorf("the installed binary: %v %s", err, out)
			}
			// No state dir: systemd makes it under DynamicUser=.
			for _, p := range []string{"var/lib/podwatch", "var/lib/private"} {
				if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
					t.Errorf("the package made %s", p)
				}
			}
			// Install adds the package's files and dpkg's records, nothing else.
			for _, d := range diffSnapshots(before, snapshot(t, root)) {
				p, added := strings.CutPrefix(d, "added ")
				if strings.HasPrefix(d, "changed var/lib/dpkg/") ||
					added && (p == "systemctl.log" || strings.HasPrefix(p, "var/lib/dpkg/") || isPackagePath(p)) {
					continue
				}
				t.Errorf("install: %s", d)
			}

			verifyUnit(t, root)
			// The example, installed as it says, verifies with the unit.
			dropIn := filepath.Join(root, "etc/systemd/system/podwatch.service.d/follow.conf")
			if err := os.MkdirAll(filepath.Dir(dropIn), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dropIn, follow, 0o644); err != nil {
				t.Fatal(err)
			}
			verifyUnit(t, root)
			if err := os.RemoveAll(filepath.Join(root, "etc/systemd")); err != nil {
				t.Fatal(err)
			}

			// What systemd makes at the first start under DynamicUser= with
			// StateDirectory=podwatch: the state in /var/lib/private (its
			// own, 0700) and a symlink to it at /var/lib/podwatch.
			private := filepath.Join(root, "var/lib/private")
			stateDir := filepath.Join(private, StateDirectory)
			stateFile := filepath.Join(stateDir, "state.json")
			link := filepath.Join(root, "var/lib", StateDirectory)
			if err := os.MkdirAll(stateDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(private, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(stateFile, []byte("{}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("private/"+StateDirectory, link); err != nil {
				t.Fatal(err)
			}

			// Remove keeps the config file and the state; purge takes both.
			dpkg(t, root, "--remove", "podwatch")
			checkFile(t, filepath.Join(root, Config), 0o644, defaultConfig)
			if _, err := os.Lstat(filepath.Join(root, Binary)); err == nil {
				t.Errorf("remove left %s", Binary)
			}
			checkFile(t, stateFile, 0o600, []byte("{}\n"))
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("remove took the state's symlink /var/lib/%s: %v", StateDirectory, err)
			}
			dpkg(t, root, "--purge", "podwatch")
			for _, p := range []string{stateDir, link} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("purge left %s", p)
				}
			}
			if fi, err := os.Lstat(private); err != nil || !fi.IsDir() {
				t.Errorf("purge took systemd's /var/lib/private: %v", err)
			}

			// The scripts reloaded systemd when it runs, and did nothing else.
			calls, err := os.ReadFile(filepath.Join(root, "systemctl.log"))
			if withSystemd {
				lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
				if err != nil || len(lines) < 2 {
					t.Errorf("systemctl calls %q (%v), want daemon-reload after install and removal", calls, err)
				}
				for _, l := range lines {
					if l != "daemon-reload" {
						t.Errorf("systemctl %s: the scripts may only reload", l)
					}
				}
				os.Remove(filepath.Join(root, "systemctl.log"))
			} else if err == nil {
				t.Errorf("systemctl ran without systemd: %q", calls)
			}

			// Nothing left but dpkg's own bookkeeping of a purged package,
			// and systemd's /var/lib/private.
			after := snapshot(t, root)
			for _, d := range diffSnapshots(before, after) {
				if !strings.HasPrefix(d, "changed var/lib/dpkg/") && !strings.HasPrefix(d, "added var/lib/dpkg/") && d != "added var/lib/private" {
					t.Errorf("after purge: %s", d)
				}
			}
			for p := range after {
				if strings.Contains(p, "podwatch") {
					t.Errorf("after purge: %s remains", p)
				}
			}
		})
	}
	// None of it touched the host.
	if d := diffSnapshots(host, hostState(t)); len(d) > 0 {
		t.Errorf("the host changed: %v", d)
	}
}

// isPackagePath says whether rel, relative to the root, is one of the
// package's files or a directory above one.
func isPackagePath(rel string) bool {
	for _, f := range []string{Binary, Config, Unit, FollowExample} {
		if "/"+rel == f || strings.HasPrefix(f, "/"+rel+"/") {
			return true
		}
	}
	return false
}

// verifyUnit runs systemd-analyze verify on the installed unit, in the root
// the binary was installed to.
func verifyUnit(t *testing.T, root string) {
	t.Helper()
	analyze, err := systemdAnalyze()
	if err != nil {
		t.Fatal(err)
	}
	if analyze == "" {
		t.Log("no systemd-analyze: the installed unit is not verified")
		return
	}
	out, err := exec.Command(analyze, "verify", "--man=no", "--recursive-errors=no",
		"--root="+root, Unit).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("podwatch")) {
		t.Errorf("systemd-analyze verify %s: %v\n%s", Unit, err, out)
	}
}

// systemdAnalyze finds systemd-analyze, or returns "" when it is missing
// on a developer's machine. In CI (CI set to true, as .ci/run and CI
// services do) a missing one is an error: make test runs verify-systemd,
// which installs it, before test-package, so the installed unit can never
// go unverified there without a failure.
func systemdAnalyze() (string, error) {
	path, err := exec.LookPath("systemd-analyze")
	if err == nil {
		return path, nil
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		return "", fmt.Errorf("CI: %v; the installed unit must be verified (make verify-systemd installs systemd-analyze, and make test runs it first)", err)
	}
	return "", nil
}

func TestSystemdAnalyzeRequiredInCI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "true")
	if path, err := systemdAnalyze(); err == nil || !strings.Contains(err.Error(), "systemd-analyze") {
		t.Errorf("CI without systemd-analyze: %q, %v; want an error", path, err)
	}
	t.Setenv("CI", "")
	if path, err := systemdAnalyze(); path != "" || err != nil {
		t.Errorf("without systemd-analyze outside CI: %q, %v; want neither", path, err)
	}
}

// TestRPM reads the .rpm: its files, their modes and owners, the config
// flag, and the scripts.
func TestRPM(t *testing.T) {
	_, rpm := buildPackages(t)
	f, err := os.Open(rpm)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := rpmutils.ReadRpm(f)
	if err != nil {
		t.Fatal(err)
	}
	nevra, err := r.Header.GetNEVRA()
	if err != nil || nevra.Name != "podwatch" || nevra.Version != "1.2.3" {
		t.Errorf("NEVRA %v (%v)", nevra, err)
	}
	fis, err := r.Header.GetFiles()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		mode   int
		config bool
	}{
		Binary:        {0o100755, false},
		Unit:          {0o100644, false},
		Config:        {0o100644, true},
		FollowExample: {0o100644, false},
	}
	for _, fi := range fis {
		w, ok := want[fi.Name()]
		if !ok {
			// rpm packages own no shared directory, nor a state dir.
			t.Errorf("unexpected file %s (mode %o)", fi.Name(), fi.Mode())
			continue
		}
		delete(want, fi.Name())
		config := fi.Flags()&rpmutils.RPMFILE_CONFIG != 0
		noreplace := fi.Flags()&rpmutils.RPMFILE_NOREPLACE != 0
		if fi.Mode() != w.mode || fi.UserName() != "root" || fi.GroupName() != "root" || config != w.config || noreplace != w.config {
			t.Errorf("%s: mode %o owner %s:%s config %v noreplace %v", fi.Name(), fi.Mode(), fi.UserName(), fi.GroupName(), config, noreplace)
		}
	}
	for name := range want {
		t.Errorf("%s missing", name)
	}
	for tag, name := range map[int]string{rpmutils.POSTIN: "%post", rpmutils.POSTUN: "%postun"} {
		script, err := r.Header.GetString(tag)
		if err != nil || !strings.Contains(script, "systemctl daemon-reload") || !strings.Contains(script, "[ -d /run/systemd/system ]") {
			t.Errorf("%s: %q (%v)", name, script, err)
		}
	}
	// rpm has no purge: erase (rpm -e, %postun with $1 = 0) leaves the
	// state systemd made, as dpkg --remove does, and docs/install.md says so.
	script, err := r.Header.GetString(rpmutils.POSTUN)
	if err != nil || script != string(daemonReload) {
		t.Errorf("%%postun: %q (%v), want daemon-reload.sh", script, err)
	}
	for _, l := range strings.Split(script, "\n") {
		if !strings.HasPrefix(l, "#") && (strings.Contains(l, "/var/lib") || strings.Contains(l, "rm ")) {
			t.Errorf("%%postun: %q: erase must leave the state", l)
		}
	}
	for _, tag := range []int{rpmutils.PREIN, rpmutils.PREUN} {
		if r.Header.HasTag(tag) {
			t.Errorf("rpm has a script under tag %d; only %%post and %%postun are wanted", tag)
		}
	}
}

// The .deb's purge removes /var/lib/private/podwatch: a unit whose
// StateDirectory= names another, or more than one, fails the build and
// says why, rather than ship a purge that leaves the state behind.
func TestBuildRefusesAnotherStateDirectory(t *testing.T) {
	repo, err := os.ReadFile(repoUnitPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkStateDirectory(repo); err != nil {
		t.Fatalf("the repo's unit: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "podwatch")
	if err := os.WriteFile(bin, []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, change := range []string{"StateDirectory=podwatch-agent", "StateDirectory=podwatch podwatch-cache", "StateDirectory=podwatch\nStateDirectory=other"} {
		unit := filepath.Join(dir, "podwatch.service")
		data := strings.Replace(string(repo), "StateDirectory=podwatch", change, 1)
		if err := os.WriteFile(unit, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		_, err := Build(Options{Binary: bin, Unit: unit, Follow: repoFollowPath, Version: "v1", Arch: "amd64", OutDir: out})
		if err == nil || !strings.Contains(err.Error(), "StateDirectory=") {
			t.Errorf("Build with %q: %v, want an error about StateDirectory=", change, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("Build with %q made %s", change, out)
		}
	}
}

// A missing follow drop-in, or a file that is not one, fails the build and
// names the file, before anything is packaged.
func TestBuildRefusesABadFollowDropIn(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "podwatch")
	if err := os.WriteFile(bin, []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	notDropIn := filepath.Join(dir, "follow.conf")
	if err := os.WriteFile(notDropIn, []byte("SupplementaryGroups=containerd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, follow := range []string{filepath.Join(dir, "missing.conf"), notDropIn} {
		out := filepath.Join(dir, "out")
		_, err := Build(Options{Binary: bin, Unit: repoUnitPath, Follow: follow, Version: "v1", Arch: "amd64", OutDir: out})
		if err == nil || !strings.Contains(err.Error(), filepath.Base(follow)) {
			t.Errorf("Build with follow drop-in %s: %v, want an error naming it", follow, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("Build with follow drop-in %s made %s", follow, out)
		}
	}
}
