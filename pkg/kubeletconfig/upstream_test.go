package kubeletconfig

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// The upstream type is used only here: linking it into the agent would bring
// k8s.io/component-base's registries with it (see doc.go).

// TestFieldsMatchUpstream guards the two json names and types podwatch decodes
// against a rename or retype in k8s.io/kubelet.
func TestFieldsMatchUpstream(t *testing.T) {
	if got := kubeletv1beta1.SchemeGroupVersion.String(); got != APIVersion {
		t.Errorf("upstream group version %q, APIVersion %q", got, APIVersion)
	}
	upstream := map[string]reflect.Type{}
	ut := reflect.TypeFor[kubeletv1beta1.KubeletConfiguration]()
	for i := range ut.NumField() {
		name, _, _ := strings.Cut(ut.Field(i).Tag.Get("json"), ",")
		upstream[name] = ut.Field(i).Type
	}
	wantType := map[string]reflect.Type{
		"staticPodPath":            reflect.TypeFor[string](),
		"fileCheckFrequency":       reflect.TypeFor[metav1.Duration](),
		"containerRuntimeEndpoint": reflect.TypeFor[string](),
	}
	ot := reflect.TypeFor[fields]()
	for i := range ot.NumField() {
		name, _, _ := strings.Cut(ot.Field(i).Tag.Get("json"), ",")
		got, ok := upstream[name]
		if !ok {
			t.Errorf("field %q is not in upstream KubeletConfiguration", name)
			continue
		}
		if got != wantType[name] {
			t.Errorf("upstream field %q has type %v, Load decodes it as %v", name, got, wantType[name])
		}
	}
}

// upstreamDecode decodes data into the full upstream type the way the
// kubelet's loader does: strictly, then leniently when only strictness
// failed. lenient reports that fallback (the kubelet logs a warning).
func upstreamDecode(data []byte) (kc kubeletv1beta1.KubeletConfiguration, lenient bool, err error) {
	doc := data
	isYAML := !bytes.HasPrefix(bytes.TrimLeftFunc(data, unicode.IsSpace), []byte("{"))
	var strictErrs []error
	if isYAML {
		if doc, err = yaml.YAMLToJSON(data); err != nil {
			return kc, false, err
		}
		if _, err := yaml.YAMLToJSONStrict(data); err != nil {
			strictErrs = append(strictErrs, err)
		}
	}
	errs, err := kjson.UnmarshalStrict(doc, &kc)
	if err != nil {
		return kc, false, err
	}
	strictErrs = append(strictErrs, errs...)
	if len(strictErrs) == 0 {
		return kc, false, nil
	}
	kc = kubeletv1beta1.KubeletConfiguration{}
	return kc, true, kjson.UnmarshalCaseSensitivePreserveInts(doc, &kc)
}

// TestLoadMatchesUpstreamType decodes every testdata file with the upstream
// type and checks that Load gives the kubelet's values, or fails where the
// kubelet's decode fails.
func TestLoadMatchesUpstreamType(t *testing.T) {
	// Files the kubelet loads only after its strict decode failed.
	wantLenient := []string{"duplicate-keys.json", "duplicate-keys.yaml", "unknown-fields.yaml", "wrong-case.yaml"}
	var lenient []string
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		file := filepath.Join("testdata", e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, loadErr := Load(file)
		kc, wasLenient, upErr := upstreamDecode(data)
		switch {
		case len(data) == 0 || errors.Is(loadErr, ErrNotKubeletConfig) || errors.Is(loadErr, ErrInvalid):
			// The kubelet refuses these too, by its scheme or at run time
			// (a negative period panics its ticker); the bare type cannot tell.
			if loadErr == nil {
				t.Errorf("%s: Load succeeded", file)
			}
			continue
		case errors.Is(loadErr, ErrDecode):
			if upErr == nil {
				t.Errorf("%s: Load failed (%v) but the upstream type decodes it", file, loadErr)
			}
			continue
		case loadErr != nil:
			t.Errorf("%s: Load: %v", file, loadErr)
			continue
		case upErr != nil:
			t.Errorf("%s: Load succeeded but the upstream type fails: %v", file, upErr)
			continue
		}
		if wasLenient {
			lenient = append(lenient, e.Name())
		}
		want := kc.StaticPodPath
		if want != "" && !filepath.IsAbs(want) {
			want = filepath.Join(filepath.Dir(got.File), want)
		}
		freq := kc.FileCheckFrequency.Duration
		if freq == 0 {
			freq = 20 * time.Second // the kubelet's SetDefaults_KubeletConfiguration
		}
		if got.StaticPodPath != want || got.FileCheckFrequency != freq {
			t.Errorf("%s: Load gave %q, %v; the kubelet %q, %v", file, got.StaticPodPath, got.FileCheckFrequency, want, freq)
		}
		endpoint := kc.ContainerRuntimeEndpoint
		if endpoint == "" {
			endpoint = "unix:///run/containerd/containerd.sock" // SetDefaults_KubeletConfiguration
		}
		if got.ContainerRuntimeEndpoint != endpoint {
			t.Errorf("%s: Load gave endpoint %q; the kubelet %q", file, got.ContainerRuntimeEndpoint, endpoint)
		}
	}
	if !slices.Equal(lenient, wantLenient) {
		t.Errorf("files the kubelet decodes only leniently: %q, want %q", lenient, wantLenient)
	}
}
