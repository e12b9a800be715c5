package kubeletconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// maxFileSize bounds what Load reads: real kubelet configs are a few KiB, and
// a --kubelet-config pointed at a device or a huge file by mistake must fail
// rather than take the node's memory.
const maxFileSize = 4 << 20

// typeMeta is read with encoding/json, as the kubelet's codecs read
// apiVersion and kind before choosing a type.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// fields are the v1beta1.KubeletConfiguration fields podwatch reads, kept
// raw so a bad value is reported by field name. The names are upstream's
// json names (a test checks them against k8s.io/kubelet/config/v1beta1).
type fields struct {
	StaticPodPath      json.RawMessage `json:"staticPodPath"`
	FileCheckFrequency json.RawMessage `json:"fileCheckFrequency"`
	// ContainerRuntimeEndpoint is read only for --follow-pods.
	ContainerRuntimeEndpoint json.RawMessage `json:"containerRuntimeEndpoint"`
}

// Load reads the KubeletConfiguration at path and returns what the kubelet
// takes from it for static pods. Errors wrap one of ErrRead, ErrDecode,
// ErrNotKubeletConfig or ErrInvalid and name the file, and the line where the
// decoder or the YAML parser knows it.
func Load(path string) (Config, error) {
	// The kubelet makes the config path absolute before anything else; a
	// relative staticPodPath then resolves against that absolute folder.
	abs, err := filepath.Abs(path)
	if err != nil {
		return Config{}, fmt.Errorf("%w: %s: %w", ErrRead, path, err)
	}
	data, err := readFile(abs)
	if err != nil {
		return Config{}, err
	}
	cfg, err := decode(abs, data)
	if err != nil {
		return Config{}, err
	}
	cfg.File = abs
	if cfg.StaticPodPath != "" && !filepath.IsAbs(cfg.StaticPodPath) {
		cfg.StaticPodPath = filepath.Join(filepath.Dir(abs), cfg.StaticPodPath)
	}
	return cfg, nil
}

func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRead, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	switch {
	case err != nil:
		// A *PathError: it names the file.
		return nil, fmt.Errorf("%w: %w", ErrRead, err)
	case len(data) == 0:
		// As the kubelet: some settings are required, so no content is an error.
		return nil, fmt.Errorf("%w: %s: file is empty", ErrRead, name)
	case len(data) > maxFileSize:
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrRead, name, maxFileSize)
	}
	return data, nil
}

// decode turns data into a Config without resolving paths. name is only for
// errors.
func decode(name string, data []byte) (Config, error) {
	doc := data
	isJSON := bytes.HasPrefix(bytes.TrimLeftFunc(data, unicode.IsSpace), []byte("{"))
	if !isJSON {
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return Config{}, fmt.Errorf("%w: %s: %w", ErrDecode, name, err)
		}
		doc = j
	}
	var tm typeMeta
	if err := json.Unmarshal(doc, &tm); err != nil {
		return Config{}, syntaxError(name, data, isJSON, err)
	}
	if tm.APIVersion != APIVersion || tm.Kind != Kind {
		// Point at the key that is wrong: a Pod manifest by mistake is wrong
		// in both, and its kind says more.
		keys := []string{"kind", "apiVersion"}
		if tm.Kind == Kind {
			keys = []string{"apiVersion"}
		}
		return Config{}, fmt.Errorf("%w: %s: %s", ErrNotKubeletConfig, at(name, data, keys...), describeType(tm))
	}
	var raw fields
	// Case-sensitive like the kubelet's decoder: "StaticPodPath" is not the
	// field, and the kubelet ignores it.
	if err := kjson.UnmarshalCaseSensitivePreserveInts(doc, &raw); err != nil {
		return Config{}, syntaxError(name, data, isJSON, err)
	}
	cfg := Config{FileCheckFrequency: DefaultFileCheckFrequency, ContainerRuntimeEndpoint: DefaultContainerRuntimeEndpoint}
	if present(raw.StaticPodPath) {
		cfg.Set.StaticPodPath = true
		if err := kjson.UnmarshalCaseSensitivePreserveInts(raw.StaticPodPath, &cfg.StaticPodPath); err != nil {
			return Config{}, fmt.Errorf("%w: %s: staticPodPath: want a string: %w", ErrDecode, at(name, data, "staticPodPath"), err)
		}
	}
	if present(raw.ContainerRuntimeEndpoint) {
		var ep string
		if err := kjson.UnmarshalCaseSensitivePreserveInts(raw.ContainerRuntimeEndpoint, &ep); err != nil {
			return Config{}, fmt.Errorf("%w: %s: containerRuntimeEndpoint: want a string: %w", ErrDecode, at(name, data, "containerRuntimeEndpoint"), err)
		}
		if ep != "" {
			cfg.ContainerRuntimeEndpoint = ep
		}
	}
	// Not present(): a null duration is an error for the kubelet (its
	// UnmarshalJSON gets "null" and parses ""), so it is one here.
	if len(raw.FileCheckFrequency) > 0 {
		cfg.Set.FileCheckFrequency = true
		var d metav1.Duration
		if err := d.UnmarshalJSON(raw.FileCheckFrequency); err != nil {
			return Config{}, fmt.Errorf("%w: %s: fileCheckFrequency: want a duration such as \"20s\": %w", ErrDecode, at(name, data, "fileCheckFrequency"), err)
		}
		switch {
		case d.Duration < 0:
			// The kubelet's file source would panic in time.NewTicker.
			return Config{}, fmt.Errorf("%w: %s: fileCheckFrequency %v is negative", ErrInvalid, at(name, data, "fileCheckFrequency"), d.Duration)
		case d.Duration > 0:
			// Zero is the kubelet's "unset": it defaults it to 20s.
			cfg.FileCheckFrequency = d.Duration
		}
	}
	return cfg, nil
}

// present is false for an absent field and for null, which the kubelet
// treats alike for a string field.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

func describeType(tm typeMeta) string {
	switch {
	case tm.APIVersion == "" && tm.Kind == "":
		return "apiVersion and kind are missing"
	case tm.Kind == "":
		return fmt.Sprintf("kind is missing (apiVersion %q)", tm.APIVersion)
	case tm.APIVersion == "":
		return fmt.Sprintf("apiVersion is missing (kind %q)", tm.Kind)
	}
	return fmt.Sprintf("got apiVersion %q, kind %q", tm.APIVersion, tm.Kind)
}

// syntaxError reports a document that is not a JSON object (a YAML list or
// scalar arrives here as converted JSON), with line and column for JSON input,
// where the decoder's offset is into the file itself.
func syntaxError(name string, data []byte, isJSON bool, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field == "" {
		return fmt.Errorf("%w: %s: the document is %s, not a mapping of fields", ErrDecode, name, jsonKind(typeErr.Value))
	}
	if typeErr != nil {
		// apiVersion or kind of the wrong type.
		return fmt.Errorf("%w: %s: %s: want a %s, got a %s", ErrDecode, at(name, data, typeErr.Field), typeErr.Field, typeErr.Type, typeErr.Value)
	}
	if ok, off := kjson.SyntaxErrorOffset(err); ok && isJSON {
		line, col := lineCol(data, off)
		return fmt.Errorf("%w: %s:%d:%d: %w", ErrDecode, name, line, col, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrDecode, name, err)
}

// jsonKind names what a YAML or JSON document turned out to be, from the
// json package's word for it.
func jsonKind(value string) string {
	switch value {
	case "array":
		return "a list"
	case "string", "number", "bool":
		return "a single " + value
	}
	return value
}

func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
