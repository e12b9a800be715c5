package manifest

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"
)

// The canonical encoding (types.Pod.JSON) writes every quantity in its
// canonical form, so that Hash ignores how a value is spelt; but the
// kubelet's config hash sees the spelling ("1000m" is not "1"), and a
// message that says "1" for a file that says "1000m" sends its reader
// looking for text that is not there. quantitySpellings keeps the file's
// own text of the resource quantities spelt otherwise, named by the field
// paths pkg/diff uses.

// rawResources are a container's or the pod's resources as written.
type rawResources struct {
	Limits   map[string]json.RawMessage `json:"limits"`
	Requests map[string]json.RawMessage `json:"requests"`
}

type rawContainer struct {
	Name      string       `json:"name"`
	Resources rawResources `json:"resources"`
}

type rawSpec struct {
	Spec struct {
		Containers     []rawContainer             `json:"containers"`
		InitContainers []rawContainer             `json:"initContainers"`
		Resources      rawResources               `json:"resources"`
		Overhead       map[string]json.RawMessage `json:"overhead"`
		Volumes        []struct {
			Name     string `json:"name"`
			EmptyDir *struct {
				SizeLimit json.RawMessage `json:"sizeLimit"`
			} `json:"emptyDir"`
		} `json:"volumes"`
	} `json:"spec"`
}

// quantitySpellings reads js, the JSON the kubelet decodes, which has
// already decoded into a valid pod; it returns nil when every quantity is
// spelt canonically, as in most manifests.
func quantitySpellings(js []byte) map[string]string {
	var raw rawSpec
	// Case-sensitive, as the kubelet's decoder: "Limits" is not "limits".
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &raw); err != nil {
		return nil // the typed decode succeeded; only the spellings are lost
	}
	var out map[string]string
	note := func(path string, v json.RawMessage) {
		text, ok := spelling(v)
		if !ok {
			return
		}
		if out == nil {
			out = map[string]string{}
		}
		out[path] = text
	}
	resources := func(path string, r rawResources) {
		for name, v := range r.Limits {
			note(path+".limits["+name+"]", v)
		}
		for name, v := range r.Requests {
			note(path+".requests["+name+"]", v)
		}
	}
	// A container's limit without a request is copied into its requests
	// before hashing (copyLimitsToRequests), spelling and all.
	containers := func(path string, cs []rawContainer) {
		for _, c := range cs {
			r := c.Resources
			for name, v := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					note(path+"["+c.Name+"].resources.requests["+name+"]", v)
				}
			}
			resources(path+"["+c.Name+"].resources", r)
		}
	}
	containers("spec.containers", raw.Spec.Containers)
	containers("spec.initContainers", raw.Spec.InitContainers)
	resources("spec.resources", raw.Spec.Resources)
	for name, v := range raw.Spec.Overhead {
		note("spec.overhead["+name+"]", v)
	}
	for _, v := range raw.Spec.Volumes {
		if v.EmptyDir != nil {
			note("spec.volumes["+v.Name+"].emptyDir.sizeLimit", v.EmptyDir.SizeLimit)
		}
	}
	return out
}

// spelling returns a quantity's text when it differs from the canonical
// form, which is what JSON then holds.
func spelling(v json.RawMessage) (string, bool) {
	text := string(v)
	if len(v) > 0 && v[0] == '"' {
		if err := json.Unmarshal(v, &text); err != nil {
			return "", false
		}
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(text))
	if err != nil || q.String() == text {
		return "", false // null, or canonical already
	}
	return text, true
}
