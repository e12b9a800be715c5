package main

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// buildAgent builds the agent as `make image` does: static, for Linux.
func buildAgent(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "podwatch")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -X main.version=test", "-o", bin, "./cmd/podwatch")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestImageRunsTheAgent(t *testing.T) {
	bin := buildAgent(t)
	out := filepath.Join(t.TempDir(), "podwatch-image.tar")
	img, err := Build(bin, "amd64", "test", time.Unix(0, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(img, "registry.example/podwatch:test", out); err != nil {
		t.Fatal(err)
	}
	// What a runtime would load from the tarball.
	tag, _ := name.NewTag("registry.example/podwatch:test")
	loaded, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loaded.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Config.Entrypoint, " "); got != Binary || cfg.Config.User != "0:0" || cfg.OS != "linux" ||
		cfg.Config.Labels["org.opencontainers.image.version"] != "test" {
		t.Fatalf("config: entrypoint %q user %q os %q labels %v", got, cfg.Config.User, cfg.OS, cfg.Config.Labels)
	}
	layers, err := loaded.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v; want 1", len(layers), err)
	}
	// The filesystem holds the binary alone, executable; it runs.
	rc := mutate.Extract(loaded)
	defer rc.Close()
	tr := tar.NewReader(rc)
	extracted := filepath.Join(t.TempDir(), "podwatch")
	files := 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files++
		if hdr.Name != "podwatch" || hdr.Mode&0o111 == 0 || hdr.Uid != 0 {
			t.Fatalf("image file %s mode %o uid %d", hdr.Name, hdr.Mode, hdr.Uid)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(extracted, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if files != 1 {
		t.Fatalf("%d files in the image, want the binary alone", files)
	}
	outb, err := exec.Command(extracted, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(outb), "test") {
		t.Fatalf("the image's binary: %v %s", err, outb)
	}
	// The same binary and time give the same image.
	again, err := Build(bin, "amd64", "test", time.Unix(0, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of one binary: %s and %s", d1, d2)
	}
}

func TestImageRefusesWhatIsNotAnExecutable(t *testing.T) {
	notBin := filepath.Join(t.TempDir(), "podwatch")
	if err := os.WriteFile(notBin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(notBin, "amd64", "test", time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "not a Linux executable") {
		t.Fatalf("Build of a script: %v", err)
	}
	if _, err := Build(filepath.Join(t.TempDir(), "missing"), "amd64", "test", time.Unix(0, 0)); err == nil {
		t.Fatal("Build of a missing file succeeded")
	}
	img, err := Build(buildAgent(t), "amd64", "test", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(img, "not a valid tag!", filepath.Join(t.TempDir(), "x.tar")); err == nil {
		t.Fatal("Write with an invalid tag succeeded")
	}
}
