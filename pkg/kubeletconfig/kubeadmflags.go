package kubeletconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// maxFlagsFileSize bounds what HostnameOverride reads: kubeadm's file is one
// line of flags.
const maxFlagsFileSize = 64 << 10

// HostnameOverride reads the kubelet's --hostname-override from kubeadm's
// flags file (/var/lib/kubelet/kubeadm-flags.env, a KUBELET_KUBEADM_ARGS="..."
// line the kubelet's unit passes on). It returns "" when the file gives
// none; a missing file is an error wrapping fs.ErrNotExist.
func HostnameOverride(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxFlagsFileSize {
		return "", fmt.Errorf("%s: not a kubeadm flags file (a regular file of at most %d bytes)", path, maxFlagsFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	override := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.TrimPrefix(name, "export ") != "KUBELET_KUBEADM_ARGS" {
			continue
		}
		args, err := unquote(value)
		if err != nil {
			return "", fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if v, ok := flagValue(strings.Fields(args), "hostname-override"); ok {
			override = v
		}
	}
	return override, sc.Err()
}

// unquote undoes the shell quoting systemd's EnvironmentFile accepts around a
// value: double or single quotes, or none.
func unquote(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		s, err := strconv.Unquote(v)
		if err != nil {
			return "", fmt.Errorf("KUBELET_KUBEADM_ARGS: %w", err)
		}
		return s, nil
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1], nil
	case strings.ContainsAny(v, `"'`):
		return "", fmt.Errorf("KUBELET_KUBEADM_ARGS: unbalanced quotes")
	}
	return v, nil
}

// flagValue finds --name=value or --name value in args; the last one wins,
// as it does for the kubelet's flag parser.
func flagValue(args []string, name string) (string, bool) {
	value, found := "", false
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		if len(args[i])-len(a) == 0 || len(args[i])-len(a) > 2 {
			continue
		}
		switch {
		case strings.HasPrefix(a, name+"="):
			value, found = strings.TrimPrefix(a, name+"="), true
		case a == name && i+1 < len(args):
			value, found = args[i+1], true
			i++
		}
	}
	return value, found
}
