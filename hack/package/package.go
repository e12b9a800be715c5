package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

// Where the package puts things.
const (
	Binary = "/usr/bin/podwatch"
	Unit   = "/usr/lib/systemd/system/podwatch.service"
	Config = "/etc/default/podwatch"
	// FollowExample is the opt-in drop-in that lets the unit connect to the
	// container runtime's socket, root-equivalent access, so it ships where
	// systemd does not read it; the admin copies it into
	// /etc/systemd/system/podwatch.service.d/. Not under /usr/share/doc,
	// which minimal images exclude from installs.
	FollowExample = "/usr/share/podwatch/follow.conf"
)

// StateDirectory is the unit's StateDirectory=, the name under /var/lib
// (and /var/lib/private, under DynamicUser=) that files/postrm-deb.sh
// removes on purge. Build refuses a unit that names another, so the purge
// cannot miss a renamed state dir.
const StateDirectory = "podwatch"

// repoBinary is the ExecStart path of deploy/systemd/podwatch.service, which
// `make install` uses; the package's unit differs from it by that path alone.
const repoBinary = "/usr/local/bin/podwatch"

var (
	//go:embed files/default
	defaultConfig []byte
	//go:embed files/daemon-reload.sh
	daemonReload []byte
	//go:embed files/postrm-deb.sh
	postrmDeb []byte
)

// Formats are the packagers Build runs, in order.
var Formats = []string{"deb", "rpm"}

// Options say what to package.
type Options struct {
	Binary  string    // the linux binary to ship
	Unit    string    // the repo's unit, deploy/systemd/podwatch.service
	Follow  string    // the repo's deploy/systemd/podwatch.service.d/follow.conf, shipped as FollowExample
	Version string    // as git describe prints it; see PackageVersion
	Arch    string    // GOARCH of the binary
	OutDir  string    // where the packages go
	MTime   time.Time // stamped on every file, for reproducible packages
}

// PackageUnit is the unit the package ships: the repo's unit with its
// ExecStart pointing at Binary. It fails unless exactly one line starts the
// repo's binary, so a changed unit cannot silently ship a wrong path.
func PackageUnit(repoUnit []byte) ([]byte, error) {
	re := regexp.MustCompile(`(?m)^ExecStart=` + regexp.QuoteMeta(repoBinary) + `( |$)`)
	if n := len(re.FindAllIndex(repoUnit, -1)); n != 1 {
		return nil, fmt.Errorf("package: the unit has %d ExecStart=%s lines, want 1", n, repoBinary)
	}
	return re.ReplaceAll(repoUnit, []byte("ExecStart="+Binary+"$1")), nil
}

// checkStateDirectory fails unless the unit has one StateDirectory= line
// and it names StateDirectory alone.
func checkStateDirectory(unit []byte) error {
	m := regexp.MustCompile(`(?m)^StateDirectory=(.*)$`).FindAllSubmatch(unit, -1)
	if len(m) != 1 || strings.TrimSpace(string(m[0][1])) != StateDirectory {
		var got []string
		for _, l := range m {
			got = append(got, string(l[1]))
		}
		return fmt.Errorf("package: the unit's StateDirectory= is %q, want %q alone: the .deb's purge removes that one (files/postrm-deb.sh)", got, StateDirectory)
	}
	return nil
}

// PackageVersion turns a git describe output into a version that dpkg and
// rpm both accept and order: no leading v, no hyphens (dpkg reads the last as
// a revision, rpm refuses them), and a leading digit (a bare commit hash
// becomes 0.0.0+hash, older than any release).
func PackageVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	if v == "" || v[0] < '0' || v[0] > '9' {
		v = "0.0.0+" + v
	}
	return strings.ReplaceAll(v, "-", ".")
}

// Build writes one package per format into o.OutDir and returns their paths.
func Build(o Options) ([]string, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("package: read binary: %w", err)
	}
	if !bytes.HasPrefix(bin, []byte{0x7f, 'E', 'L', 'F'}) {
		return nil, fmt.Errorf("package: %s is not a Linux executable (build it with GOOS=linux)", o.Binary)
	}
	repoUnit, err := os.ReadFile(o.Unit)
	if err != nil {
		return nil, fmt.Errorf("package: read unit: %w", err)
	}
	unit, err := PackageUnit(repoUnit)
	if err != nil {
		return nil, err
	}
	if err := checkStateDirectory(unit); err != nil {
		return nil, err
	}
	follow, err := os.ReadFile(o.Follow)
	if err != nil {
		return nil, fmt.Errorf("package: read the follow drop-in: %w", err)
	}
	if !bytes.Contains(follow, []byte("\n[Service]\n")) {
		return nil, fmt.Errorf("package: %s is not a drop-in of the unit: no [Service] section", o.Follow)
	}
	// nFPM packages files from disk: stage the generated ones.
	stage, err := os.MkdirTemp("", "podwatch-package-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	staged := map[string][]byte{"podwatch.service": unit, "default": defaultConfig, "daemon-reload.sh": daemonReload, "postrm-deb.sh": postrmDeb, "follow.conf": follow}
	for name, data := range staged {
		if err := os.WriteFile(filepath.Join(stage, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, format := range Formats {
		path, err := buildOne(format, o, stage)
		if err != nil {
			return out, err
		}
		out = append(out, path)
	}
	return out, nil
}

func buildOne(format string, o Options, stage string) (string, error) {
	// Only dpkg tells remove from purge; rpm's %postun just reloads.
	postRemove := "daemon-reload.sh"
	if format == "deb" {
		postRemove = "postrm-deb.sh"
	}
	root := func(mode os.FileMode) *files.ContentFileInfo {
		return &files.ContentFileInfo{Owner: "root", Group: "root", Mode: mode, MTime: o.MTime}
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:          "podwatch",
		Arch:          o.Arch,
		Platform:      "linux",
		Version:       PackageVersion(o.Version),
		VersionSchema: "none",
		Release:       "1",
		Section:       "admin",
		Priority:      "optional",
		Maintainer:    "podwatch maintainers",
		Description:   "Records what the kubelet will do with its static pod manifests",
		Homepage:      "https://github.com/podwatch/podwatch",
		MTime:         o.MTime,
		Overridables: nfpm.Overridables{
			Contents: files.Contents{
				{Source: o.Binary, Destination: Binary, FileInfo: root(0o755)},
				{Source: filepath.Join(stage, "podwatch.service"), Destination: Unit, FileInfo: root(0o644)},
				{Source: filepath.Join(stage, "default"), Destination: Config, Type: files.TypeConfigNoReplace, FileInfo: root(0o644)},
				{Source: filepath.Join(stage, "follow.conf"), Destination: FollowExample, FileInfo: root(0o644)},
			},
			Scripts: nfpm.Scripts{
				PostInstall: filepath.Join(stage, "daemon-reload.sh"),
				PostRemove:  filepath.Join(stage, postRemove),
			},
		},
	})
	if err := nfpm.PrepareForPackager(info, format); err != nil {
		return "", fmt.Errorf("package: %s: %w", format, err)
	}
	if err := nfpm.Validate(info); err != nil {
		return "", fmt.Errorf("package: %s: %w", format, err)
	}
	packager, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	path := filepath.Join(o.OutDir, packager.ConventionalFileName(info))
	tmp, err := os.CreateTemp(o.OutDir, ".podwatch-package-*")
	if err != nil {
		return "", err
	}
	err = packager.Package(info, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644) // CreateTemp makes it 0600
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", errors.Join(fmt.Errorf("package: %s: %w", format, err), os.Remove(tmp.Name()))
	}
	return path, nil
}
