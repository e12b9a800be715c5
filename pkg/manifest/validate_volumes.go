package manifest

import (
	"path"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var supportedHostPathTypes = []v1.HostPathType{v1.HostPathUnset, v1.HostPathBlockDev, v1.HostPathCharDev,
	v1.HostPathDirectory, v1.HostPathDirectoryOrCreate, v1.HostPathFile, v1.HostPathFileOrCreate, v1.HostPathSocket}

// validateVolumes returns the volumes that validated: a mount naming a
// broken volume is reported as not found, as in the kubelet.
func validateVolumes(vols []v1.Volume, meta *metav1.ObjectMeta, p *field.Path) (map[string]v1.VolumeSource, field.ErrorList) {
	var errs field.ErrorList
	ok := map[string]v1.VolumeSource{}
	names := map[string]bool{}
	for i, v := range vols {
		ip := p.Index(i)
		el := validateVolumeSource(&v.VolumeSource, v.Name, meta, ip)
		if v.Name == "" {
			el = append(el, field.Required(ip.Child("name"), ""))
		} else {
			el = append(el, dnsLabel(ip.Child("name"), v.Name)...)
		}
		if names[v.Name] {
			el = append(el, field.Duplicate(ip.Child("name"), v.Name))
		}
		if len(el) == 0 {
			names[v.Name] = true
			ok[v.Name] = v.VolumeSource
		} else {
			errs = append(errs, el...)
		}
	}
	return ok, errs
}

// validateVolumeSource allows exactly one source; the later ones are
// reported in the kubelet's order with its field names. Sources that need
// the API server get only the presence check: the static-pod reference rule
// rejects them right after validation anyway.
func validateVolumeSource(vs *v1.VolumeSource, name string, meta *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(present bool, fieldName string, check func() field.ErrorList) {
		if !present {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(fieldName), "may not specify more than 1 volume type"))
			return
		}
		n++
		if check != nil {
			errs = append(errs, check()...)
		}
	}
	one(vs.EmptyDir != nil, "emptyDir", func() field.ErrorList { return validateEmptyDir(vs.EmptyDir, p.Child("emptyDir")) })
	one(vs.HostPath != nil, "hostPath", func() field.ErrorList { return validateHostPath(vs.HostPath, p.Child("hostPath")) })
	one(vs.GitRepo != nil, "gitRepo", func() field.ErrorList { return validateGitRepo(vs.GitRepo, p.Child("gitRepo")) }) //nolint:staticcheck // still accepted by the kubelet
	one(vs.GCEPersistentDisk != nil, "gcePersistentDisk", nil)
	one(vs.AWSElasticBlockStore != nil, "awsElasticBlockStore", nil)
	one(vs.Secret != nil, "secret", nil)
	one(vs.NFS != nil, "nfs", func() field.ErrorList { return validateNFS(vs.NFS, p.Child("nfs")) })
	one(vs.ISCSI != nil, "iscsi", nil)
	one(vs.Glusterfs != nil, "glusterfs", nil) //nolint:staticcheck // every source counts
	one(vs.Flocker != nil, "flocker", nil)     //nolint:staticcheck // every source counts
	one(vs.PersistentVolumeClaim != nil, "persistentVolumeClaim", nil)
	one(vs.RBD != nil, "rbd", nil)         //nolint:staticcheck // every source counts
	one(vs.Cinder != nil, "cinder", nil)   //nolint:staticcheck // every source counts
	one(vs.CephFS != nil, "cephFS", nil)   //nolint:staticcheck // every source counts
	one(vs.Quobyte != nil, "quobyte", nil) //nolint:staticcheck // every source counts
	one(vs.DownwardAPI != nil, "downwarAPI", func() field.ErrorList { return validateDownwardAPI(vs.DownwardAPI, p.Child("downwardAPI")) })
	one(vs.FC != nil, "fc", nil)
	one(vs.FlexVolume != nil, "flexVolume", nil)
	one(vs.ConfigMap != nil, "configMap", nil)
	one(vs.AzureFile != nil, "azureFile", nil)
	one(vs.VsphereVolume != nil, "vsphereVolume", nil)               //nolint:staticcheck // every source counts
	one(vs.PhotonPersistentDisk != nil, "photonPersistentDisk", nil) //nolint:staticcheck // every source counts
	one(vs.PortworxVolume != nil, "portworxVolume", nil)             //nolint:staticcheck // every source counts
	one(vs.AzureDisk != nil, "azureDisk", nil)
	one(vs.StorageOS != nil, "storageos", nil) //nolint:staticcheck // every source counts
	one(vs.Projected != nil, "projected", func() field.ErrorList { return validateProjected(vs.Projected, p.Child("projected")) })
	one(vs.ScaleIO != nil, "scaleIO", nil) //nolint:staticcheck // every source counts
	one(vs.CSI != nil, "csi", nil)
	one(vs.Ephemeral != nil, "ephemeral", func() field.ErrorList {
		if meta.Name == "" || name == "" {
			return nil
		}
		pvc := meta.Name + "-" + name
		var errs field.ErrorList
		for _, m := range dnsSubdomain(p.Child("name"), pvc) {
			m.BadValue = name
			m.Detail = "PVC name " + pvc + ": " + m.Detail
			errs = append(errs, m)
		}
		return errs
	})
	one(vs.Image != nil, "image", func() field.ErrorList {
		var errs field.ErrorList
		if vs.Image.Reference == "" {
			errs = append(errs, field.Required(p.Child("image", "reference"), ""))
		}
		return append(errs, validateEnum(p.Child("image", "pullPolicy"), vs.Image.PullPolicy, v1.PullAlways, v1.PullIfNotPresent, v1.PullNever)...)
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

func validateEmptyDir(e *v1.EmptyDirVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e.SizeLimit != nil && e.SizeLimit.Sign() < 0 {
		errs = append(errs, field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
	}
	return errs
}

func validateHostPath(h *v1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	errs := validatePathNoBacksteps(h.Path, p.Child("path"))
	if h.Type != nil {
		found := false
		for _, t := range supportedHostPathTypes {
			found = found || *h.Type == t
		}
		if !found {
			errs = append(errs, field.NotSupported(p.Child("type"), *h.Type, supportedHostPathTypes))
		}
	}
	return errs
}

func validateGitRepo(g *v1.GitRepoVolumeSource, p *field.Path) field.ErrorList { //nolint:staticcheck // still accepted by the kubelet
	var errs field.ErrorList
	if g.Repository == "" {
		errs = append(errs, field.Required(p.Child("repository"), ""))
	}
	return append(errs, validateLocalNonReservedPath(g.Directory, p.Child("directory"))...)
}

func validateNFS(n *v1.NFSVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n.Server == "" {
		errs = append(errs, field.Required(p.Child("server"), ""))
	}
	if n.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	if !path.IsAbs(n.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), n.Path, "must be an absolute path"))
	}
	return errs
}

func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

func validateDownwardAPI(d *v1.DownwardAPIVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(d.DefaultMode, p.Child("defaultMode"))
	for _, f := range d.Items {
		errs = append(errs, validateDownwardAPIFile(f, p)...)
	}
	return errs
}

func validateDownwardAPIFile(f v1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	errs = append(errs, validateLocalNonReservedPath(f.Path, p.Child("path"))...)
	errs = append(errs, validateFileMode(f.Mode, p.Child("mode"))...)
	switch {
	case f.FieldRef != nil && f.ResourceFieldRef != nil:
		errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
	case f.FieldRef == nil && f.ResourceFieldRef == nil:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	return errs
}

func validateProjected(pr *v1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(pr.DefaultMode, p.Child("defaultMode"))
	for i, s := range pr.Sources {
		sp := p.Child("sources").Index(i)
		n := 0
		for _, present := range []bool{s.Secret != nil, s.ConfigMap != nil, s.DownwardAPI != nil,
			s.ServiceAccountToken != nil, s.ClusterTrustBundle != nil, s.PodCertificate != nil} {
			if present {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
		if s.DownwardAPI != nil {
			for _, f := range s.DownwardAPI.Items {
				errs = append(errs, validateDownwardAPIFile(f, sp.Child("downwardAPI"))...)
			}
		}
	}
	return errs
}

func validatePathNoBacksteps(target string, p *field.Path) field.ErrorList {
	for _, part := range strings.Split(filepath.ToSlash(target), "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(target) {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(errs, validatePathNoBacksteps(target, p)...)
}

func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}
