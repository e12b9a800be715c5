package lint

import (
	"cmp"
	"slices"
)

// Severity says whether a finding fails the check.
type Severity string

const (
	// Error: the kubelet rejects the file, or runs something other than it
	// says, or podwatch could not look.
	Error Severity = "error"
	// Warning: the kubelet runs it, but probably not as intended.
	Warning Severity = "warning"
)

// Code identifies a kind of finding. Codes are stable: scripts match on them.
type Code string

const (
	CodeIOError         Code = "io-error"         // a path or file could not be read: the check is incomplete
	CodeInvalidManifest Code = "invalid-manifest" // the kubelet rejects the file
	CodeTooComplex      Code = "too-complex"      // podwatch refuses to expand the file's YAML aliases
	CodeDuplicatePod    Code = "duplicate-pod"    // another file defines the same pod and wins
	CodeLeftover        Code = "leftover-file"    // a backup or temporary file the kubelet reads anyway
	CodeNotRegular      Code = "not-regular"      // an entry the kubelet skips, logging an error on every relist
	CodePermissions     Code = "permissions"      // someone other than root can change what the kubelet runs
	CodeIgnoredContent  Code = "ignored-content"  // content the kubelet silently drops
)

// codeOrder puts the findings of one file and line in the order a reader
// wants them: why it could not be read, what the file is, who can write it,
// whether it is valid, then the details.
var codeOrder = map[Code]int{
	CodeIOError:         0,
	CodeNotRegular:      1,
	CodeLeftover:        2,
	CodePermissions:     3,
	CodeInvalidManifest: 4,
	CodeTooComplex:      4,
	CodeDuplicatePod:    5,
	CodeIgnoredContent:  6,
}

// skippable are the codes Options.Skip accepts: only warnings, so skipping
// never turns a manifest the kubelet rejects into a pass.
var skippable = map[Code]bool{
	CodeLeftover:       true,
	CodeNotRegular:     true,
	CodePermissions:    true,
	CodeIgnoredContent: true,
}

// Finding is one problem with one file.
type Finding struct {
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"` // 1-based, 0 when unknown or about the whole file
	Severity Severity `json:"severity"`
	Code     Code     `json:"code"`
	Message  string   `json:"message"`
}

// sortFindings orders by file then line. The sort is stable so that two
// findings of one code keep the order in which they were found.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(codeOrder[a.Code], codeOrder[b.Code]),
		)
	})
}
