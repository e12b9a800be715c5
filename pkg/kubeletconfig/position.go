package kubeletconfig

import (
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"
)

// at returns "name:line" for the first of keys found at the top level of the
// document, else name. Only error paths call it: the decoders that match the
// kubelet carry no positions, so the file is parsed again for them. yaml.v3
// reads JSON too, so one lookup serves both formats.
func at(name string, data []byte, keys ...string) string {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return name
	}
	m := doc.Content[0]
	if m.Kind != yamlv3.MappingNode {
		return name
	}
	for _, key := range keys {
		line := 0
		// The last occurrence wins, as in the lenient decode the kubelet
		// falls back to.
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				line = m.Content[i].Line
			}
		}
		if line > 0 {
			return fmt.Sprintf("%s:%d", name, line)
		}
	}
	return name
}
