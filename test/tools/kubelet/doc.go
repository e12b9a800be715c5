// Package kubelet runs the real kubelet, built from k8s.io/kubernetes at
// apiserver.KubeVersion, in standalone mode against a fake CRI served from
// the test process, and reports what it starts and stops: the RunPodSandbox,
// StopPodSandbox and RemovePodSandbox calls it makes (each names the pod's
// UID) and its "SyncLoop" log lines. The kubelet is the judge of what a
// manifest folder does; podwatch's Events are compared with it.
//
// The kubelet runs in a private mount namespace with tmpfs over /var/lib and
// /var/log and read-only files over the six sysctls it would set, so the
// host is left as it was; Isolation says whether that can be done here.
package kubelet
