// Package relistjudge holds podwatch's kubelet relist detector
// (pkg/source/relist) to the real kubelet's relists: the kubelet runs
// through test/tools/kubelet on a folder of manifests, the detector
// watches the same folder, and each relist it recognises is compared with
// the kubelet's own log, which names a folder inside the manifest folder
// at every relist and at nothing else. Podwatch's own file source beside
// them must add no relist of its own.
package relistjudge
