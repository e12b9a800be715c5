package cri

// Labels and annotations the kubelet puts on what it asks the runtime for
// (k8s.io/kubelet's kuberuntime), by which podwatch finds a pod's sandbox
// and containers. They are the kubelet's contract with tools such as
// crictl, stable across releases.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
	// AnnotationContainerHash is the kubelet's hash of a container's name
	// and image: an in-place update restarts the containers whose hash
	// changed.
	AnnotationContainerHash = "io.kubernetes.container.hash"
	// AnnotationConfigSource is the pod's kubernetes.io/config.source,
	// which the kubelet copies onto the sandbox: "file" for a static pod
	// from the manifest folder.
	AnnotationConfigSource = "kubernetes.io/config.source"
	ConfigSourceFile       = "file"
)
