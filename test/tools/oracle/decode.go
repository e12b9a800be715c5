package oracle

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/helper"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers core/v1 in legacyscheme, as the kubelet's config package does
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"k8s.io/kubernetes/pkg/util/hash"
	utilio "k8s.io/utils/io"
)

// maxFileSize is the file source's read limit: reading stops there and a file
// that reaches it is rejected whole.
const maxFileSize = 10 << 20

// Decode gives the file source's verdict on one file's content without
// staging it on disk. The kubelet keeps its per-file decoding unexported, so
// this walks the same steps through the exported packages it is built from;
// TestDecodeMatchesFileSource holds it to FileSource on the whole corpus.
//
// name only appears in messages, as it would in the kubelet's, and is the
// source the pod's UID hashes.
func Decode(name string, data []byte, nodeName string) Verdict {
	return DecodeAt(name, name, data, nodeName)
}

// DecodeAt is Decode for a file whose path, as the file source names it, is
// source: the kubelet's UID hashes the pod with the node name and that path.
func DecodeAt(name, source string, data []byte, nodeName string) Verdict {
	if len(data) >= maxFileSize {
		return Verdict{Message: utilio.ErrLimitReached.Error()}
	}
	// The kubelet words errors from before it has a *Pod differently from
	// validation errors, and the corpus keys on that wording.
	unparsed := func(err error) Verdict {
		return Verdict{Message: fmt.Sprintf("%s: couldn't parse as pod(%v), please check config file", name, err)}
	}
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return unparsed(err)
	}
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), js)
	if err != nil {
		return unparsed(err)
	}
	pod, ok := obj.(*api.Pod)
	if !ok {
		return unparsed(fmt.Errorf("invalid pod: %#v", obj))
	}
	if pod.Name == "" {
		return Verdict{Message: "invalid pod: name is needed for the pod"}
	}
	applyFileDefaults(pod, source, types.NodeName(nodeName))
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&pod.Spec, nil, &pod.ObjectMeta, nil)
	if errs := validation.ValidatePodCreate(pod, opts); len(errs) > 0 {
		return Verdict{Message: fmt.Sprintf("invalid pod: %v", errs)}
	}
	out := &v1.Pod{}
	if err := corev1.Convert_core_Pod_To_v1_Pod(pod, out, nil); err != nil {
		return Verdict{Message: err.Error()}
	}
	// The reference check runs on the internal pod, after conversion, as in
	// the kubelet; the order only matters for which error wins.
	if _, resource, err := podutil.HasAPIObjectReference(pod); err != nil {
		return Verdict{Message: err.Error()}
	} else if resource != "" {
		return Verdict{Message: "static pods may not reference " + resource}
	}
	return Verdict{Valid: true, Key: out.Namespace + "/" + out.Name, Pod: out}
}

// applyFileDefaults gives a decoded pod the identity a static pod gets. The
// generated UID only has to be stable and hex-shaped: it ends up in an
// annotation, where its length counts against the annotation size limit,
// and nothing else validates it.
func applyFileDefaults(pod *api.Pod, source string, nodeName types.NodeName) {
	if pod.UID == "" {
		h := fnv.New128a()
		hash.DeepHashObject(h, pod)
		fmt.Fprintf(h, "host:%s", nodeName)
		fmt.Fprintf(h, "file:%s", source)
		pod.UID = types.UID(hex.EncodeToString(h.Sum(nil)))
	}
	pod.Name = pod.Name + "-" + strings.ToLower(string(nodeName))
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = string(nodeName)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[kubetypes.ConfigHashAnnotationKey] = string(pod.UID)
	helper.AddOrUpdateTolerationInPod(pod, &api.Toleration{
		Operator: api.TolerationOpExists,
		Effect:   api.TaintEffectNoExecute,
	})
	pod.Status.Phase = api.PodPending
}
