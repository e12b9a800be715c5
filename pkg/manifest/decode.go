package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
)

// ErrTooComplex is wrapped by the error for a YAML document whose aliases
// expand it beyond a sane size. This is podwatch refusing to do the work,
// not a kubelet verdict: the kubelet would try to expand it.
var ErrTooComplex = errors.New("yaml: document contains excessive aliasing: aliases expand it beyond 20 MiB")

// Decode decodes, defaults and validates one static pod manifest as the
// kubelet's file source does. Any failure is a *Error.
func Decode(data []byte, opts Options) (*types.Pod, error) {
	if len(data) >= MaxSize {
		return nil, &Error{Msg: ErrTooLarge.Error(), Err: ErrTooLarge}
	}
	d := &decoder{data: data, opts: opts}
	return d.decode()
}

// decoder holds the per-call state of one Decode.
type decoder struct {
	data    []byte
	opts    Options
	isJSON  bool
	root    *node // nil when podwatch's own parse failed; lines are then 0
	ignored []types.Ignored
}

func (d *decoder) decode() (*types.Pod, error) {
	// The kubelet takes anything that starts with "{" for JSON, even a YAML
	// flow mapping, which then fails as JSON.
	d.isJSON = utilyaml.IsJSONBuffer(d.data)
	if err := d.parseTree(); err != nil {
		return nil, err
	}

	js, err := utilyaml.ToJSON(d.data)
	if err != nil {
		return nil, d.syntaxError(err)
	}
	if err := d.checkKind(js); err != nil {
		return nil, err
	}

	pod := &v1.Pod{}
	strict, err := kjson.UnmarshalStrict(js, pod, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, d.typeError(err)
	}
	d.collectIgnored(strict)

	setDefaults(pod)
	if pod.Name == "" {
		return nil, d.errorAt("metadata.name", "metadata.name: Required value: name is needed for the pod", nil)
	}
	config := configIdentity(pod, d.opts.NodeName)
	applyStaticDefaults(pod, d.opts.NodeName)

	if errs := validatePod(pod); len(errs) > 0 {
		return nil, d.fieldErrors(pod, errs)
	}
	if path, msg := apiObjectReference(pod); msg != "" {
		return nil, d.errorAt(path, msg, nil)
	}

	sort.SliceStable(d.ignored, func(i, j int) bool { return d.ignored[i].Line < d.ignored[j].Line })
	raw, hash, err := encodePod(pod)
	if err != nil {
		return nil, &Error{Msg: err.Error(), Err: err}
	}
	return &types.Pod{
		Key:        pod.Namespace + "/" + pod.Name,
		Hash:       hash,
		Config:     config,
		UID:        pod.UID,
		Spelt:      quantitySpellings(js),
		Containers: containerList(pod),
		JSON:       raw,
		Ignored:    d.ignored,
	}, nil
}

// treeMax is the largest file podwatch builds its positional tree for. The
// tree (yaml.v3's nodes and podwatch's) takes a large multiple of the file's
// size, on top of the kubelet's own conversion that follows, while a real
// manifest is a few KiB; a huge file should cost the conversion, not a tree
// as well. Above it, errors carry no line and duplicate keys and later
// documents go unremarked; the verdict is the same
// (FuzzTreeChangesNoVerdict).
const treeMax = 1 << 20

// parseTree builds podwatch's positional tree. Failing to build it only costs
// line numbers, except for alias expansion, which must be refused up front.
func (d *decoder) parseTree() error {
	limit := treeMax
	if d.opts.treeMax > 0 {
		limit = d.opts.treeMax
	}
	if d.isJSON {
		if len(d.data) <= limit {
			if root, err := parseJSON(d.data); err == nil {
				d.root = root
			}
		}
		return nil
	}
	if len(d.data) > limit {
		// Without a "*" there is no alias to expand.
		if bytes.IndexByte(d.data, '*') >= 0 && expandedSize(d.data) > maxExpanded {
			return &Error{Line: 1, Msg: ErrTooComplex.Error(), Err: ErrTooComplex}
		}
		return nil
	}
	doc, err := parseYAML(d.data)
	if err != nil {
		return nil
	}
	if doc.expanded > maxExpanded {
		return &Error{Line: 1, Msg: ErrTooComplex.Error(), Err: ErrTooComplex}
	}
	d.root = doc.root
	switch {
	case doc.extra > 0:
		d.ignored = append(d.ignored, types.Ignored{Line: doc.extra, What: "second YAML document: only the first document of a file is read"})
	case doc.extraErr != nil:
		d.ignored = append(d.ignored, types.Ignored{Line: yamlErrorLine(doc.extraErr), What: "unparsable content after the first YAML document: only the first document of a file is read"})
	}
	return nil
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

func yamlErrorLine(err error) int {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// syntaxError reports a failed YAML-to-JSON conversion. Some converter
// messages print the offending key and value, so only known-safe ones pass.
func (d *decoder) syntaxError(err error) *Error {
	msg := err.Error()
	if strings.Contains(msg, "map key") {
		msg = "yaml: a mapping key is itself a mapping or a sequence"
	}
	line := yamlErrorLine(err)
	if line > 0 {
		// Error prints the line itself, so the parser's own mention of it
		// would say it twice.
		msg = strings.Replace(msg, "line "+strconv.Itoa(line)+": ", "", 1)
	}
	if line == 0 && d.root != nil {
		line = 1
	}
	return &Error{Line: line, Msg: msg, Err: err}
}

// checkKind mirrors the decoder's first look at the document: apiVersion and
// kind are read case-insensitively, and only a v1 Pod is a static pod.
func (d *decoder) checkKind(js []byte) error {
	var tm struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(js, &tm); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 0
			if d.isJSON {
				line = newLineIndex(d.data).line(se.Offset - 1)
			}
			return &Error{Line: line, Msg: "invalid JSON: " + se.Error(), Err: err}
		}
		var ute *json.UnmarshalTypeError
		what := "value"
		if errors.As(err, &ute) {
			what = strings.Fields(ute.Value + " value")[0]
		}
		return &Error{Line: 1, Msg: fmt.Sprintf("cannot unmarshal %s into a Pod: the manifest is %s, not an object", what, describeJSON(js)), Err: err}
	}
	if tm.Kind == "" {
		return d.errorAt("kind", `kind: Required value: a static pod manifest needs "kind: Pod"`, nil)
	}
	if tm.APIVersion == "" {
		return d.errorAt("apiVersion", `apiVersion: Required value: a static pod manifest needs "apiVersion: v1"`, nil)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return d.errorAt("apiVersion", fmt.Sprintf("apiVersion: Invalid value: %q: not a group/version", tm.APIVersion), err)
	}
	if gv.Group != "" || gv.Version != "v1" {
		return d.errorAt("apiVersion", fmt.Sprintf(`apiVersion: Unsupported value: %q: no kind %q is registered for version %q (a static pod is apiVersion "v1", kind "Pod")`,
			tm.APIVersion, tm.Kind, tm.APIVersion), nil)
	}
	if tm.Kind != "Pod" {
		return d.errorAt("kind", fmt.Sprintf(`kind: Unsupported value: %q: a static pod is apiVersion "v1", kind "Pod"`, tm.Kind), nil)
	}
	return nil
}

func describeJSON(js []byte) string {
	s := strings.TrimSpace(string(js))
	switch {
	case s == "null":
		return "empty"
	case strings.HasPrefix(s, "["):
		return "a list"
	case strings.HasPrefix(s, `"`):
		return "a string"
	case s == "true" || s == "false":
		return "a boolean"
	default:
		return "a scalar"
	}
}

// typeError reports a value of the wrong type. The decoder's own message has
// no list indices and may quote numbers, so podwatch finds the node itself.
func (d *decoder) typeError(err error) *Error {
	if path, line, what, ok := findTypeMismatch(d.root); ok {
		if known := quantityError(err); known != "" {
			what += ": " + known
		}
		return &Error{Line: line, Msg: fmt.Sprintf("%s: Invalid value: %s", path, what), Err: err}
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return &Error{Msg: fmt.Sprintf("%s: Invalid value: expected %s, got %s", ute.Field, ute.Type, strings.Fields(ute.Value)[0]), Err: err}
	}
	return &Error{Msg: "cannot decode pod: " + redactAll(err.Error()), Err: err}
}

// quantityError returns the decoder's text for a malformed quantity, which
// describes the format without quoting the input.
func quantityError(err error) string {
	for _, e := range []error{resource.ErrFormatWrong, resource.ErrNumeric, resource.ErrSuffix} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return ""
}

// redactAll keeps a decoder message only when it cannot carry input text.
func redactAll(msg string) string {
	if strings.ContainsAny(msg, `"'`+"`") {
		return "invalid value"
	}
	return msg
}

// errorAt builds an error whose line is that of path in the document.
func (d *decoder) errorAt(path, msg string, cause error) *Error {
	return &Error{Line: lineOf(d.root, path), Msg: msg, Err: cause}
}
