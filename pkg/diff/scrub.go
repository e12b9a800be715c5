package diff

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// The published state keeps each pod's JSON to explain a later UPDATE, also
// across a restart. On disk, values that may be secret (the fields
// podFieldChanges only names as changed) are replaced by a keyed digest:
// equal values still compare equal, so UPDATE explanations are the same,
// but state.json holds no token or password from the manifests.

// digestPrefix marks a value that is already a digest, so scrubbing twice
// changes nothing.
const digestPrefix = "podwatch-digest:"

// digest is HMAC-SHA256 under the state's salt, cut to 128 bits: the salt
// is random per state dir, so a digest cannot be looked up in a table of
// common passwords prepared elsewhere.
func digest(salt []byte, s string) string {
	m := hmac.New(sha256.New, salt)
	m.Write([]byte(s))
	return digestPrefix + hex.EncodeToString(m.Sum(nil)[:16])
}

// scrubPod replaces, in place, every non-empty string that may be secret:
// annotation values, and under spec every string below a sensitive field
// except the merge keys that name list items (an env var's name).
func scrubPod(pod *v1.Pod, salt []byte) {
	s := scrubber{salt: salt}
	for k, v := range pod.Annotations {
		pod.Annotations[k] = s.str(v)
	}
	s.walk(reflect.ValueOf(&pod.Spec).Elem(), false, "")
}

type scrubber struct{ salt []byte }

func (s scrubber) str(v string) string {
	if v == "" || strings.HasPrefix(v, digestPrefix) {
		return v
	}
	return digest(s.salt, v)
}

// walk scrubs v; keep names the struct field left as is (a merge key).
func (s scrubber) walk(v reflect.Value, secret bool, keep string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			s.walk(v.Elem(), secret, keep)
		}
	case reflect.String:
		if secret && v.CanSet() {
			v.SetString(s.str(v.String()))
		}
	case reflect.Struct:
		switch v.Type() {
		case quantityType, intstrType, timeType:
			return // numbers and times; an IntOrString port name is no secret
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" || (secret && name == keep && keep != "") {
				continue
			}
			s.walk(v.Field(i), secret || sensitive(name), f.Tag.Get("patchMergeKey"))
		}
	case reflect.Slice:
		for i := range v.Len() {
			s.walk(v.Index(i), secret, keep)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			s.walk(e, secret, "")
			v.SetMapIndex(k, e)
		}
	}
}

// ScrubbedPod returns p as it is written to disk: a copy whose JSON has
// every value that may be secret replaced by a digest under salt. p itself
// is not changed; it may be shared.
func ScrubbedPod(p *PodState, salt []byte) (*PodState, error) {
	js, err := scrubJSON(p.JSON, salt)
	if err != nil {
		return nil, fmt.Errorf("diff: scrub published pod from %s: %w", p.File, err)
	}
	q := *p
	q.JSON = js
	return &q, nil
}

func scrubJSON(js json.RawMessage, salt []byte) (json.RawMessage, error) {
	if len(js) == 0 {
		return js, nil
	}
	var pod v1.Pod
	if err := json.Unmarshal(js, &pod); err != nil {
		return nil, err
	}
	scrubPod(&pod, salt)
	return json.Marshal(&pod)
}
