package manifest

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// setDefaults applies the v1 defaults the kubelet's decoder applies before
// validation (kubelet v1.37 with default feature gates). Order matters: pod
// level first (limits copied into requests before rounding), then the spec,
// volumes and containers.
func setDefaults(pod *v1.Pod) {
	spec := &pod.Spec

	copyLimitsToRequests(spec.Containers)
	copyLimitsToRequests(spec.InitContainers)
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptrTo(v1.DefaultEnableServiceLinks)
	}
	if spec.HostNetwork {
		// With the host's network a container port is a host port.
		defaultHostPorts(spec.Containers)
		defaultHostPorts(spec.InitContainers)
	}

	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount //nolint:staticcheck // kept in sync as the decoder does
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName //nolint:staticcheck // kept in sync as the decoder does
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = v1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &v1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo(int64(v1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
	}

	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundResourceList(spec.Overhead)
	if spec.Resources != nil {
		roundResourceList(spec.Resources.Limits)
		roundResourceList(spec.Resources.Requests)
	}
	defaultPodIPs(&pod.Status)
}

func ptrTo[T any](v T) *T { return &v }

func copyLimitsToRequests(cs []v1.Container) {
	for i := range cs {
		r := &cs[i].Resources
		if r.Limits == nil {
			continue
		}
		if r.Requests == nil {
			r.Requests = v1.ResourceList{}
		}
		for k, v := range r.Limits {
			if _, ok := r.Requests[k]; !ok {
				r.Requests[k] = v.DeepCopy()
			}
		}
	}
}

func defaultHostPorts(cs []v1.Container) {
	for i := range cs {
		for j := range cs[i].Ports {
			if cs[i].Ports[j].HostPort == 0 {
				cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
			}
		}
	}
}

// roundResourceList rounds every quantity up to milli precision.
func roundResourceList(l v1.ResourceList) {
	for k, v := range l {
		v.RoundUp(resource.Milli)
		l[k] = v
	}
}

func defaultVolume(v *v1.Volume) {
	vs := &v.VolumeSource
	if allSourcesNil(vs) {
		vs.EmptyDir = &v1.EmptyDirVolumeSource{}
	}
	if vs.Image != nil && vs.Image.PullPolicy == "" {
		vs.Image.PullPolicy = pullPolicyFor(vs.Image.Reference)
	}
	if vs.HostPath != nil && vs.HostPath.Type == nil {
		vs.HostPath.Type = ptrTo(v1.HostPathUnset)
	}
	if vs.Secret != nil && vs.Secret.DefaultMode == nil {
		vs.Secret.DefaultMode = ptrTo(v1.SecretVolumeSourceDefaultMode)
	}
	if vs.ConfigMap != nil && vs.ConfigMap.DefaultMode == nil {
		vs.ConfigMap.DefaultMode = ptrTo(v1.ConfigMapVolumeSourceDefaultMode)
	}
	if vs.ISCSI != nil && vs.ISCSI.ISCSIInterface == "" {
		vs.ISCSI.ISCSIInterface = "default"
	}
	if vs.RBD != nil {
		setIfEmpty(&vs.RBD.RBDPool, "rbd")
		setIfEmpty(&vs.RBD.RadosUser, "admin")
		setIfEmpty(&vs.RBD.Keyring, "/etc/ceph/keyring")
	}
	if vs.DownwardAPI != nil {
		if vs.DownwardAPI.DefaultMode == nil {
			vs.DownwardAPI.DefaultMode = ptrTo(v1.DownwardAPIVolumeSourceDefaultMode)
		}
		for i := range vs.DownwardAPI.Items {
			defaultFieldRef(vs.DownwardAPI.Items[i].FieldRef)
		}
	}
	if vs.AzureDisk != nil {
		d := vs.AzureDisk
		if d.CachingMode == nil {
			d.CachingMode = ptrTo(v1.AzureDataDiskCachingReadWrite)
		}
		if d.FSType == nil {
			d.FSType = ptrTo("ext4")
		}
		if d.ReadOnly == nil {
			d.ReadOnly = ptrTo(false)
		}
		if d.Kind == nil {
			d.Kind = ptrTo(v1.AzureSharedBlobDisk)
		}
	}
	if vs.Projected != nil {
		if vs.Projected.DefaultMode == nil {
			vs.Projected.DefaultMode = ptrTo(v1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range vs.Projected.Sources {
			s := &vs.Projected.Sources[i]
			if s.DownwardAPI != nil {
				for j := range s.DownwardAPI.Items {
					defaultFieldRef(s.DownwardAPI.Items[j].FieldRef)
				}
			}
			if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
				s.ServiceAccountToken.ExpirationSeconds = ptrTo(int64(3600))
			}
		}
	}
	if vs.ScaleIO != nil {
		setIfEmpty(&vs.ScaleIO.StorageMode, "ThinProvisioned")
		setIfEmpty(&vs.ScaleIO.FSType, "xfs")
	}
}

func allSourcesNil(vs *v1.VolumeSource) bool {
	return vs.HostPath == nil && vs.EmptyDir == nil && vs.GCEPersistentDisk == nil &&
		vs.AWSElasticBlockStore == nil && vs.GitRepo == nil && vs.Secret == nil && vs.NFS == nil && //nolint:staticcheck // every source counts
		vs.ISCSI == nil && vs.Glusterfs == nil && vs.PersistentVolumeClaim == nil && vs.RBD == nil && //nolint:staticcheck // every source counts
		vs.FlexVolume == nil && vs.Cinder == nil && vs.CephFS == nil && vs.Flocker == nil && //nolint:staticcheck // every source counts
		vs.DownwardAPI == nil && vs.FC == nil && vs.AzureFile == nil && vs.ConfigMap == nil &&
		vs.VsphereVolume == nil && vs.Quobyte == nil && vs.AzureDisk == nil && vs.PhotonPersistentDisk == nil && //nolint:staticcheck // every source counts
		vs.Projected == nil && vs.PortworxVolume == nil && vs.ScaleIO == nil && vs.StorageOS == nil && //nolint:staticcheck // every source counts
		vs.CSI == nil && vs.Ephemeral == nil && vs.Image == nil
}

func setIfEmpty(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

func defaultFieldRef(f *v1.ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

func defaultContainer(c *v1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	setIfEmpty(&c.TerminationMessagePath, v1.TerminationMessagePathDefault)
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = v1.ProtocolTCP
		}
	}
	for i := range c.Env {
		vf := c.Env[i].ValueFrom
		if vf == nil {
			continue
		}
		defaultFieldRef(vf.FieldRef)
		if vf.FileKeyRef != nil && vf.FileKeyRef.Optional == nil {
			vf.FileKeyRef.Optional = ptrTo(false)
		}
	}
	roundResourceList(c.Resources.Limits)
	roundResourceList(c.Resources.Requests)
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*v1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

func defaultProbe(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptrTo("")
	}
}

func defaultHTTPGet(h *v1.HTTPGetAction) {
	if h == nil {
		return
	}
	setIfEmpty(&h.Path, "/")
	if h.Scheme == "" {
		h.Scheme = v1.URISchemeHTTP
	}
	// H2CContainerProbe is GA in v1.37, so the protocol is always defaulted.
	if h.Protocol == nil {
		h.Protocol = ptrTo(v1.HTTPProtocolHTTP1)
	}
}

func defaultPodIPs(s *v1.PodStatus) {
	hasIP, hasIPs := s.PodIP != "", len(s.PodIPs) > 0
	switch {
	case hasIP && !hasIPs:
		s.PodIPs = []v1.PodIP{{IP: s.PodIP}}
	case !hasIP && hasIPs:
		s.PodIP = s.PodIPs[0].IP
	case hasIP && hasIPs && s.PodIPs[0].IP != s.PodIP:
		s.PodIPs = []v1.PodIP{{IP: s.PodIP}}
	}
}

// pullPolicyFor is Always when the image resolves to the "latest" tag
// (explicitly or by having neither tag nor digest), else IfNotPresent. An
// unparsable reference has no tag, so it gets IfNotPresent.
func pullPolicyFor(image string) v1.PullPolicy {
	if imageTag(image) == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

// applyStaticDefaults does what the kubelet's file source does to every pod
// it reads. The config-hash annotation and UID are left out: they hash the
// file path, which Decode does not know.
func applyStaticDefaults(pod *v1.Pod, nodeName string) {
	pod.Name = pod.Name + "-" + strings.ToLower(nodeName)
	if pod.Namespace == "" {
		pod.Namespace = v1.NamespaceDefault
	}
	pod.Spec.NodeName = nodeName
	addNoExecuteToleration(&pod.Spec)
	pod.Status.Phase = v1.PodPending
}

// addNoExecuteToleration keeps static pods from eviction on node problems.
// Like the kubelet, it replaces any toleration with the same key, operator,
// value and effect (dropping its tolerationSeconds) and appends otherwise.
func addNoExecuteToleration(spec *v1.PodSpec) {
	want := v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}
	replaced := false
	for i, t := range spec.Tolerations {
		if t.Key == want.Key && t.Operator == want.Operator && t.Value == want.Value && t.Effect == want.Effect {
			spec.Tolerations[i] = want
			replaced = true
		}
	}
	if !replaced {
		spec.Tolerations = append(spec.Tolerations, want)
	}
}
