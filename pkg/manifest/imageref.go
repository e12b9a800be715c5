package manifest

import (
	"regexp"
	"strings"
)

// The default pull policy depends on the image's tag as the container
// reference grammar (distribution/reference) parses it. Only the pieces
// needed to tell "valid, tag X" from "unparsable" are reproduced.
var (
	refPathComponent = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	refDomainName    = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*`
	refIPv6          = `\[(?:[a-fA-F0-9:]+)\]`
	refDomain        = `(?:` + refDomainName + `|` + refIPv6 + `)(?::[0-9]+)?`
	refName          = `(?:` + refDomain + `/)?` + refPathComponent + `(?:/` + refPathComponent + `)*`
	refTag           = `[\w][\w.-]{0,127}`
	refDigest        = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
	referenceRE      = regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	anchoredHex64RE  = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

const maxRefNameLength = 255

// imageTag returns the tag the image resolves to: its own tag, "latest" when
// it has neither tag nor digest, "" when it has only a digest or does not
// parse.
func imageTag(image string) string {
	if image == "" || anchoredHex64RE.MatchString(image) {
		return ""
	}
	m := referenceRE.FindStringSubmatch(image)
	if m == nil || len(m[1]) > maxRefNameLength {
		return ""
	}
	// A reference without a domain is normalised under docker.io/library;
	// the repository part must be lowercase, which the grammar ensures, but
	// a first component with uppercase letters is only valid as a domain.
	first, _, hasSlash := strings.Cut(m[1], "/")
	if !hasSlash && strings.ToLower(first) != first {
		return ""
	}
	switch {
	case m[2] != "":
		return m[2]
	case m[3] != "":
		return ""
	}
	return "latest"
}
