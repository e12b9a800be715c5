package kubeletconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testdataDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoad(t *testing.T) {
	td := testdataDir(t)
	both := Fields{StaticPodPath: true, FileCheckFrequency: true}
	tests := []struct {
		file string
		want Config // File is filled in from file
	}{
		{"kubeadm.yaml", Config{StaticPodPath: "/etc/kubernetes/manifests", FileCheckFrequency: 20 * time.Second, Set: both}},
		{"kubelet.json", Config{StaticPodPath: "/etc/kubernetes/manifests", FileCheckFrequency: 90 * time.Second, ContainerRuntimeEndpoint: "unix:///var/run/crio/crio.sock", Set: both}},
		{"minimal.yaml", Config{FileCheckFrequency: DefaultFileCheckFrequency}},
		{"relative.yaml", Config{StaticPodPath: filepath.Join(td, "manifests"), FileCheckFrequency: 5 * time.Second, Set: both}},
		{"relative-parent.yaml", Config{StaticPodPath: filepath.Join(filepath.Dir(td), "static", "pods"), FileCheckFrequency: DefaultFileCheckFrequency, Set: Fields{StaticPodPath: true}}},
		{"empty-staticpodpath.yaml", Config{FileCheckFrequency: time.Minute, Set: both}},
		{"null-fields.yaml", Config{FileCheckFrequency: DefaultFileCheckFrequency}},
		{"unknown-fields.yaml", Config{StaticPodPath: "/srv/static-pods", FileCheckFrequency: DefaultFileCheckFrequency, Set: Fields{StaticPodPath: true}}},
		{"duplicate-keys.yaml", Config{StaticPodPath: "/srv/second", FileCheckFrequency: DefaultFileCheckFrequency, Set: Fields{StaticPodPath: true}}},
		{"duplicate-keys.json", Config{StaticPodPath: "/srv/second", FileCheckFrequency: DefaultFileCheckFrequency, Set: Fields{StaticPodPath: true}}},
		{"wrong-case.yaml", Config{FileCheckFrequency: DefaultFileCheckFrequency}},
		{"multi-document.yaml", Config{StaticPodPath: "/etc/kubernetes/manifests", FileCheckFrequency: DefaultFileCheckFrequency, Set: Fields{StaticPodPath: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Load(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.want.File = filepath.Join(td, tt.file)
			if tt.want.ContainerRuntimeEndpoint == "" {
				tt.want.ContainerRuntimeEndpoint = DefaultContainerRuntimeEndpoint // as the kubelet, for "" too (kubeadm.yaml)
			}
			if got != tt.want {
				t.Errorf("Load =\n  %+v\nwant\n  %+v", got, tt.want)
			}
			if got.StaticPodsDisabled() != (tt.want.StaticPodPath == "") {
				t.Errorf("StaticPodsDisabled() = %v", got.StaticPodsDisabled())
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		file string
		want error
		// in the message after the file name, which every error starts with.
		msg string
	}{
		{"empty.yaml", ErrRead, "empty.yaml: file is empty"},
		{"missing.yaml", ErrRead, "missing.yaml: no such file"},
		{"garbage.yaml", ErrDecode, "garbage.yaml: yaml: line 4: found a tab character"},
		{"garbage.json", ErrDecode, "garbage.json:4:49: invalid character ','"},
		{"list.yaml", ErrDecode, "list.yaml: the document is a list, not a mapping"},
		{"text.yaml", ErrDecode, "text.yaml: the document is a single string, not a mapping"},
		{"bad-duration.yaml", ErrDecode, "bad-duration.yaml:4: fileCheckFrequency: want a duration"},
		{"null-frequency.yaml", ErrDecode, `null-frequency.yaml:4: fileCheckFrequency: want a duration such as "20s": time: invalid duration ""`},
		{"bad-path-type.yaml", ErrDecode, "bad-path-type.yaml:3: staticPodPath: want a string"},
		{"negative-frequency.yaml", ErrInvalid, "negative-frequency.yaml:4: fileCheckFrequency -5s is negative"},
		{"wrong-kind.yaml", ErrNotKubeletConfig, `wrong-kind.yaml:3: got apiVersion "v1", kind "Pod"`},
		{"wrong-version.yaml", ErrNotKubeletConfig, `wrong-version.yaml:1: got apiVersion "kubelet.config.k8s.io/v1", kind "KubeletConfiguration"`},
		{"no-kind.yaml", ErrNotKubeletConfig, "no-kind.yaml: apiVersion and kind are missing"},
		{"kubeadm-config.yaml", ErrNotKubeletConfig, `kubeadm-config.yaml:4: got apiVersion "kubeadm.k8s.io/v1beta4", kind "ClusterConfiguration"`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Load(filepath.Join("testdata", tt.file))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Load error = %v, want %v", err, tt.want)
			}
			if got != (Config{}) {
				t.Errorf("Load returned %+v with its error, want the zero Config", got)
			}
			if !strings.HasPrefix(err.Error(), "kubeletconfig: ") {
				t.Errorf("error %q does not start with the package name", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

func TestLoadInline(t *testing.T) {
	tests := []struct {
		name, content string
		want          error
		msg           string
	}{
		{"whitespace only", " \n  \n", ErrNotKubeletConfig, "apiVersion and kind are missing"},
		{"kind of the wrong type", `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": 5}`, ErrDecode, "config:1: kind: want a string, got a number"},
		{"json after blank lines", "\n\n  {\"apiVersion\": \"kubelet.config.k8s.io/v1beta1\",\n\"kind\": \"KubeletConfiguration\",\n\"staticPodPath\": 3}", ErrDecode, "config:5: staticPodPath: want a string"},
		{"kind missing", "apiVersion: kubelet.config.k8s.io/v1beta1\n", ErrNotKubeletConfig, `kind is missing (apiVersion "kubelet.config.k8s.io/v1beta1")`},
		{"apiVersion missing", "kind: KubeletConfiguration\n", ErrNotKubeletConfig, `apiVersion is missing (kind "KubeletConfiguration")`},
		{"binary", "\x00\x01\x02\xff", ErrDecode, "config: "},
		{"endpoint of the wrong type", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: [a]\n", ErrDecode, "config:3: containerRuntimeEndpoint: want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(name, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(name)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Load error = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

// Errors name the file even when the OS error would not: a folder, and a
// file too large to be a kubelet config.
func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); !errors.Is(err, ErrRead) || !strings.Contains(err.Error(), dir) {
		t.Errorf("Load(folder) = %v, want ErrRead naming %s", err, dir)
	}
	big := filepath.Join(dir, "big.yaml")
	content := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n#" + strings.Repeat("x", maxFileSize)
	if err := os.WriteFile(big, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); !errors.Is(err, ErrRead) || !strings.Contains(err.Error(), big+": larger than") {
		t.Errorf("Load(big) = %v, want ErrRead naming %s", err, big)
	}
}

// The kubelet makes its --config path absolute against its working directory
// before resolving staticPodPath, so a relative config path and a relative
// staticPodPath compose.
func TestLoadRelativeConfigPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "etc"), 0o700); err != nil {
		t.Fatal(err)
	}
	content := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: manifests\n"
	if err := os.WriteFile(filepath.Join(dir, "etc", "kubelet.yaml"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	got, err := Load("etc/kubelet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// t.TempDir may sit behind a symlink (macOS /var); Abs does not resolve
	// it and neither does the kubelet.
	if want := filepath.Join(dir, "etc", "manifests"); got.StaticPodPath != want {
		t.Errorf("StaticPodPath = %q, want %q", got.StaticPodPath, want)
	}
	if want := filepath.Join(dir, "etc", "kubelet.yaml"); got.File != want {
		t.Errorf("File = %q, want %q", got.File, want)
	}
}
