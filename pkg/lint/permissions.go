package lint

import (
	"fmt"
	"io/fs"
)

// checkPermissions warns when anyone but root can change what the kubelet
// runs as root: by writing a manifest, or by adding or replacing files in the
// directory. Reading is not checked: 0644 is common and CIS only asks 600.
func (c *checker) checkPermissions(path string, fi fs.FileInfo, dir bool) {
	what := "change what the kubelet runs as root"
	if dir {
		what = "add or replace manifests, which the kubelet runs as root"
	}
	if who := writers(fi.Mode().Perm()); who != "" {
		c.add(path, 0, Warning, CodePermissions, fmt.Sprintf("mode %04o lets %s %s: chmod go-w", fi.Mode().Perm(), who, what))
	}
	if uid, ok := ownerUID(fi); ok && uid != 0 {
		c.add(path, 0, Warning, CodePermissions, fmt.Sprintf("owned by uid %d, not root, who can %s: chown root:root", uid, what))
	}
}

func writers(perm fs.FileMode) string {
	switch perm & 0o022 {
	case 0o020:
		return "the group"
	case 0o002:
		return "others"
	case 0o022:
		return "the group and others"
	}
	return ""
}
