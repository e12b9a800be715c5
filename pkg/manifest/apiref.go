package manifest

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// apiObjectReference mirrors the kubelet's refusal of static pods that need
// objects from the API server, which a static pod must run without. It
// returns the path to blame and the message, or "" when the pod is free of
// such references.
func apiObjectReference(pod *v1.Pod) (path, msg string) {
	spec := &pod.Spec
	refuse := func(p, what string) (string, string) { return p, "static pods may not reference " + what }
	if spec.ServiceAccountName != "" {
		return refuse("spec.serviceAccountName", "serviceaccounts")
	}
	if p := secretReference(spec); p != "" {
		return refuse(p, "secrets")
	}
	if p := configMapReference(spec); p != "" {
		return refuse(p, "configmaps")
	}
	if len(spec.ResourceClaims) > 0 {
		return refuse("spec.resourceClaims", "resourceclaims")
	}
	for i, v := range spec.Volumes {
		vp := fmt.Sprintf("spec.volumes[%d]", i)
		vs := v.VolumeSource
		switch {
		case vs.AWSElasticBlockStore != nil, vs.AzureDisk != nil, vs.CephFS != nil, vs.Cinder != nil, //nolint:staticcheck // every source counts
			vs.DownwardAPI != nil, vs.EmptyDir != nil, vs.FC != nil, vs.FlexVolume != nil, vs.Flocker != nil, vs.GCEPersistentDisk != nil, //nolint:staticcheck // every source counts
			vs.GitRepo != nil, vs.HostPath != nil, vs.Image != nil, vs.ISCSI != nil, vs.NFS != nil, vs.PhotonPersistentDisk != nil, //nolint:staticcheck // every source counts
			vs.PortworxVolume != nil, vs.Quobyte != nil, vs.RBD != nil, vs.ScaleIO != nil, vs.StorageOS != nil, vs.VsphereVolume != nil: //nolint:staticcheck // every source counts
			continue
		case vs.ConfigMap != nil:
			return refuse(vp+".configMap", "configmaps (via configmap volumes)")
		case vs.Secret != nil:
			return refuse(vp+".secret", "secrets (via secret volumes)")
		case vs.CSI != nil:
			return refuse(vp+".csi", "csidrivers (via CSI volumes)")
		case vs.Glusterfs != nil: //nolint:staticcheck // every source counts
			return refuse(vp+".glusterfs", "endpoints (via glusterFS volumes)")
		case vs.PersistentVolumeClaim != nil:
			return refuse(vp+".persistentVolumeClaim", "persistentvolumeclaims")
		case vs.Ephemeral != nil:
			return refuse(vp+".ephemeral", "persistentvolumeclaims (via ephemeral volumes)")
		case vs.AzureFile != nil:
			return refuse(vp+".azureFile", "secrets (via azureFile volumes)")
		case vs.Projected != nil:
			for j, s := range vs.Projected.Sources {
				sp := fmt.Sprintf("%s.projected.sources[%d]", vp, j)
				switch {
				case s.ConfigMap != nil:
					return refuse(sp+".configMap", "configmaps (via projected volumes)")
				case s.Secret != nil:
					return refuse(sp+".secret", "secrets (via projected volumes)")
				case s.ServiceAccountToken != nil:
					return refuse(sp+".serviceAccountToken", "serviceaccounts (via projected volumes)")
				case s.ClusterTrustBundle != nil:
					return refuse(sp+".clusterTrustBundle", "clustertrustbundles")
				case s.PodCertificate != nil:
					return refuse(sp+".podCertificate", "podcertificates")
				case s.DownwardAPI != nil:
					continue
				default:
					return sp, fmt.Sprintf("unknown source for projected volume %q", v.Name)
				}
			}
		default:
			return vp, fmt.Sprintf("unknown volume type for volume  %q", v.Name)
		}
	}
	return "", ""
}

// secretReference returns the path of the first non-empty secret name the
// pod refers to, in the kubelet's visiting order.
func secretReference(spec *v1.PodSpec) string {
	for i, r := range spec.ImagePullSecrets {
		if r.Name != "" {
			return fmt.Sprintf("spec.imagePullSecrets[%d]", i)
		}
	}
	if found := envReference(spec, true); found != "" {
		return found
	}
	for i, v := range spec.Volumes {
		vp := fmt.Sprintf("spec.volumes[%d]", i)
		vs := v.VolumeSource
		named := func(r *v1.LocalObjectReference) bool { return r != nil && r.Name != "" }
		switch {
		case vs.AzureFile != nil:
			if vs.AzureFile.SecretName != "" {
				return vp + ".azureFile.secretName"
			}
		case vs.CephFS != nil:
			if named(vs.CephFS.SecretRef) {
				return vp + ".cephfs.secretRef"
			}
		case vs.Cinder != nil: //nolint:staticcheck // every source counts
			if named(vs.Cinder.SecretRef) { //nolint:staticcheck // every source counts
				return vp + ".cinder.secretRef"
			}
		case vs.FlexVolume != nil:
			if named(vs.FlexVolume.SecretRef) {
				return vp + ".flexVolume.secretRef"
			}
		case vs.Projected != nil:
			for j, s := range vs.Projected.Sources {
				if s.Secret != nil && s.Secret.Name != "" {
					return fmt.Sprintf("%s.projected.sources[%d].secret", vp, j)
				}
			}
		case vs.RBD != nil: //nolint:staticcheck // every source counts
			if named(vs.RBD.SecretRef) { //nolint:staticcheck // every source counts
				return vp + ".rbd.secretRef"
			}
		case vs.Secret != nil:
			if vs.Secret.SecretName != "" {
				return vp + ".secret.secretName"
			}
		case vs.ScaleIO != nil: //nolint:staticcheck // every source counts
			if named(vs.ScaleIO.SecretRef) { //nolint:staticcheck // every source counts
				return vp + ".scaleIO.secretRef"
			}
		case vs.ISCSI != nil:
			if named(vs.ISCSI.SecretRef) {
				return vp + ".iscsi.secretRef"
			}
		case vs.StorageOS != nil: //nolint:staticcheck // every source counts
			if named(vs.StorageOS.SecretRef) { //nolint:staticcheck // every source counts
				return vp + ".storageos.secretRef"
			}
		case vs.CSI != nil:
			if named(vs.CSI.NodePublishSecretRef) {
				return vp + ".csi.nodePublishSecretRef"
			}
		}
	}
	return ""
}

func configMapReference(spec *v1.PodSpec) string {
	if found := envReference(spec, false); found != "" {
		return found
	}
	for i, v := range spec.Volumes {
		vp := fmt.Sprintf("spec.volumes[%d]", i)
		switch {
		case v.Projected != nil:
			for j, s := range v.Projected.Sources {
				if s.ConfigMap != nil && s.ConfigMap.Name != "" {
					return fmt.Sprintf("%s.projected.sources[%d].configMap", vp, j)
				}
			}
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != "" {
				return vp + ".configMap.name"
			}
		}
	}
	return ""
}

// envReference finds the first container env or envFrom entry that names a
// Secret (secrets) or a ConfigMap (!secrets), in the kubelet's order.
func envReference(spec *v1.PodSpec, secrets bool) string {
	var found string
	eachContainer(spec, func(c *v1.Container, cp string) bool {
		for i, e := range c.EnvFrom {
			switch {
			case secrets && e.SecretRef != nil && e.SecretRef.Name != "":
				found = fmt.Sprintf("%s.envFrom[%d].secretRef", cp, i)
			case !secrets && e.ConfigMapRef != nil && e.ConfigMapRef.Name != "":
				found = fmt.Sprintf("%s.envFrom[%d].configMapRef", cp, i)
			default:
				continue
			}
			return false
		}
		for i, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			switch {
			case secrets && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "":
				found = fmt.Sprintf("%s.env[%d].valueFrom.secretKeyRef", cp, i)
			case !secrets && e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Name != "":
				found = fmt.Sprintf("%s.env[%d].valueFrom.configMapKeyRef", cp, i)
			default:
				continue
			}
			return false
		}
		return true
	})
	return found
}

// eachContainer visits init, regular and ephemeral containers with their
// path until fn returns false.
func eachContainer(spec *v1.PodSpec, fn func(*v1.Container, string) bool) {
	for i := range spec.InitContainers {
		if !fn(&spec.InitContainers[i], fmt.Sprintf("spec.initContainers[%d]", i)) {
			return
		}
	}
	for i := range spec.Containers {
		if !fn(&spec.Containers[i], fmt.Sprintf("spec.containers[%d]", i)) {
			return
		}
	}
	for i := range spec.EphemeralContainers {
		if !fn((*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), fmt.Sprintf("spec.ephemeralContainers[%d]", i)) {
			return
		}
	}
}
