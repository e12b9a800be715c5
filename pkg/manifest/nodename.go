package manifest

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeName derives the node name from raw, the kubelet's
// --hostname-override or else the hostname, as the kubelet does: trimmed
// and lowercased. The result must be a DNS-1123 subdomain, as a Node's name
// must: with anything else every manifest would fail on spec.nodeName,
// which says nothing about the manifests.
func NodeName(raw string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(raw))
	if name == "" {
		return "", errors.New("node name is empty")
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return "", fmt.Errorf("node name %q: %s", name, msgs[0])
	}
	return name, nil
}
