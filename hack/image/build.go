package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Binary is where the agent sits in the image, and its entrypoint.
const Binary = "/podwatch"

// elfMagic starts every Linux executable; the image's binary must be one.
var elfMagic = []byte{0x7f, 'E', 'L', 'F'}

// Build returns the image of the binary at path, for linux/arch, stamped
// with created (a fixed time keeps the image reproducible).
func Build(path, arch, version string, created time.Time) (v1.Image, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("image: read binary: %w", err)
	}
	if !bytes.HasPrefix(bin, elfMagic) {
		return nil, fmt.Errorf("image: %s is not a Linux executable (build it with GOOS=linux CGO_ENABLED=0)", path)
	}
	layer, err := binaryLayer(bin, created)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, fmt.Errorf("image: add layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = "linux", arch, v1.Time{Time: created}
	cfg.Config.Entrypoint = []string{Binary}
	// Root: the manifests the kubelet reads are root's, mode 0600; the
	// DaemonSet drops every capability but DAC_READ_SEARCH.
	cfg.Config.User = "0:0"
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   "podwatch",
		"org.opencontainers.image.version": version,
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("image: set config: %w", err)
	}
	return mutate.CreatedAt(img, v1.Time{Time: created})
}

// binaryLayer is a layer with one file, the binary, owned by root.
func binaryLayer(bin []byte, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: Binary[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// Write saves img as a tarball tagged ref at out.
func Write(img v1.Image, ref, out string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image: tag %q: %w", ref, err)
	}
	tmp := out + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		return errors.Join(fmt.Errorf("image: write %s: %w", out, err), os.Remove(tmp))
	}
	return os.Rename(tmp, out)
}
