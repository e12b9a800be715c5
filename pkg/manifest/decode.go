package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode decodes one manifest. TEMPORARY minimal version: replaced by the
// full decoder and validator.
func Decode(data []byte, opts Options) (*Pod, error) {
	if len(data) >= MaxSize {
		return nil, &Error{Msg: ErrTooLarge.Error(), Err: ErrTooLarge}
	}
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	var pod v1.Pod
	if err := json.Unmarshal(js, &pod); err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	if pod.APIVersion != "v1" || pod.Kind != "Pod" {
		return nil, &Error{Msg: fmt.Sprintf("not a v1 Pod (apiVersion %q, kind %q)", pod.APIVersion, pod.Kind)}
	}
	if pod.Name == "" {
		return nil, &Error{Msg: "invalid pod: name is needed for the pod"}
	}
	if len(pod.Spec.Containers) == 0 {
		return nil, &Error{Msg: "spec.containers: Required value"}
	}
	pod.Name = pod.Name + "-" + strings.ToLower(opts.NodeName)
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	pod.Spec.NodeName = opts.NodeName
	canon, _ := json.Marshal(&pod)
	sum := sha256.Sum256(canon)
	return &Pod{Pod: &pod, Key: pod.Namespace + "/" + pod.Name, Hash: hex.EncodeToString(sum[:16])}, nil
}
