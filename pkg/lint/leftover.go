package lint

import (
	"regexp"
	"strings"
)

// sedTempRE matches GNU sed -i's temporary file, mkstemp's "sedXXXXXX": left
// behind when sed is interrupted, and read by the kubelet in the meantime.
var sedTempRE = regexp.MustCompile(`^sed[A-Za-z0-9]{6}$`)

// leftoverSuffixes are, lowercased, the endings of files that editors, patch
// and package managers leave next to the file they were about.
var leftoverSuffixes = []struct{ suffix, what string }{
	{"~", "editor backup file"},
	{".bak", "backup copy"},
	{".backup", "backup copy"},
	{".old", "backup copy"},
	{".orig", "backup copy"},
	{".save", "backup copy"},
	{".new", "staged copy"},
	{".tmp", "temporary file"},
	{".rej", "patch reject file"},
	{".swp", "vim swap file"},
	{".swo", "vim swap file"},
	{".swx", "vim swap file"},
	{".rpmnew", "package manager leftover"},
	{".rpmsave", "package manager leftover"},
	{".rpmorig", "package manager leftover"},
}

// leftoverKind says what kind of leftover name is, or "" when it looks like
// a file meant as a manifest.
func leftoverKind(name string) string {
	lower := strings.ToLower(name)
	switch {
	case name == "4913":
		return "vim's write test file"
	case sedTempRE.MatchString(name):
		return "sed -i temporary file"
	case len(name) > 2 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"):
		return "Emacs auto-save file"
	case strings.Contains(lower, ".dpkg-"), strings.Contains(lower, ".ucf-"):
		return "package manager leftover"
	}
	for _, s := range leftoverSuffixes {
		if strings.HasSuffix(lower, s.suffix) {
			return s.what
		}
	}
	return ""
}

// disabledSuffixes are how people try to turn a static pod off by renaming
// it, which does not work: the kubelet reads the file under any name.
var disabledSuffixes = []string{".disabled", ".disable", ".off"}

func (c *checker) checkLeftover(path, name string) {
	lower := strings.ToLower(name)
	for _, s := range disabledSuffixes {
		if strings.HasSuffix(lower, s) {
			c.add(path, 0, Warning, CodeLeftover, `renamed to disable it? The kubelet reads every file whose name does not start with "." as a manifest: move it out of the directory to stop the pod`)
			return
		}
	}
	if kind := leftoverKind(name); kind != "" {
		c.add(path, 0, Warning, CodeLeftover, kind+`: the kubelet reads every file whose name does not start with "." as a manifest; move it out of the directory`)
	}
}
