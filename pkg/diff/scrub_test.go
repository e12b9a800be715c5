package diff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/podwatch/podwatch/pkg/types"

	v1 "k8s.io/api/core/v1"
)

var testSalt = []byte("0123456789abcdef")

// scrubbedState is st as written to disk: every pod scrubbed.
func scrubbedState(t testing.TB, st State) State {
	t.Helper()
	out := st
	out.Pods = map[string]*PodState{}
	for k, p := range st.Pods {
		q, err := ScrubbedPod(p, st.Salt)
		if err != nil {
			t.Fatal(err)
		}
		out.Pods[k] = q
	}
	return out
}

// withSecrets plants a secret in each kind of field that may carry one.
func withSecrets(token string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Annotations = map[string]string{"note": "n0te-" + token}
		c := &p.Spec.Containers[0]
		c.Command = []string{"server", "--token=" + token}
		c.Args = []string{"--password=pa55-" + token}
		c.Env = []v1.EnvVar{{Name: "PASSWORD", Value: "env-" + token}}
		c.LivenessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{
			Path: "/healthz", HTTPHeaders: []v1.HTTPHeader{{Name: "Authorization", Value: "Bearer hdr-" + token}}}}}
	}
}

func TestScrubbedStateHoldsNoSecret(t *testing.T) {
	st := publishedState(t, snap(true, valid("a.yaml", pod("a", "registry.k8s.io/etcd:3.6", withSecrets("s3cr3t")), t0)))
	st.Salt = testSalt
	disk := scrubbedState(t, st)
	b, err := json.Marshal(disk)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cr3t") {
		t.Fatalf("scrubbed state holds the secret:\n%s", b)
	}
	// What is not secret stays readable: it explains UPDATEs.
	for _, keep := range []string{"registry.k8s.io/etcd:3.6", `"name":"PASSWORD"`, `"name":"Authorization"`, "/healthz", `"note"`} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("scrubbed state lost %s:\n%s", keep, b)
		}
	}
	// The state in memory is untouched.
	if !strings.Contains(string(st.Pods["kube-system/a-node-1"].JSON), "s3cr3t") {
		t.Error("ScrubbedPod changed the caller's pod")
	}
	// Scrubbing twice is scrubbing once.
	p := disk.Pods["kube-system/a-node-1"]
	again, err := scrubJSON(p.JSON, testSalt)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(p.JSON) {
		t.Errorf("second scrub changed the JSON:\n%s\n%s", p.JSON, again)
	}
}

// An UPDATE after a restart, from scrubbed state, reads as one from the
// state in memory.
func TestUpdateFromScrubbedStateReadsTheSame(t *testing.T) {
	for name, mutate := range map[string]func(*v1.Pod){
		"token changed": withSecrets("n3w"),
		"image and token changed": func(p *v1.Pod) {
			withSecrets("n3w")(p)
			p.Spec.Containers[0].Image = "img:2"
		},
		"env added": func(p *v1.Pod) {
			withSecrets("0ld")(p)
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, v1.EnvVar{Name: "EXTRA", Value: "x"})
		},
		"annotation removed": func(p *v1.Pod) {
			withSecrets("0ld")(p)
			p.Annotations = nil
		},
		"only a label": func(p *v1.Pod) {
			withSecrets("0ld")(p)
			p.Labels = map[string]string{"tier": "control-plane"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := publishedState(t, snap(true, valid("a.yaml", pod("a", "img:1", withSecrets("0ld")), t0)))
			st.Salt = testSalt
			disk := scrubbedState(t, st)
			next := snap(false, valid("a.yaml", pod("a", "img:1", mutate), t0))
			fromMemory := mustOne(t, first(Compute(st, next, t0, testOpts)), types.ReasonUpdated)
			fromDisk := mustOne(t, first(Compute(disk, next, t0, testOpts)), types.ReasonUpdated)
			if fromMemory.Message != fromDisk.Message {
				t.Fatalf("UPDATE differs after a restart:\nmemory: %s\ndisk:   %s", fromMemory.Message, fromDisk.Message)
			}
			for _, secret := range []string{"0ld", "n3w", digestPrefix} {
				if strings.Contains(fromDisk.Message, secret) {
					t.Errorf("message shows %q: %s", secret, fromDisk.Message)
				}
			}
		})
	}
}

func first(chs []types.Change, _ State, _ any) []types.Change { return chs }

func TestScrubbedRejectsBadJSON(t *testing.T) {
	p := &PodState{File: "p.yaml", Hash: "h", JSON: json.RawMessage(`{"spec":`)}
	if _, err := ScrubbedPod(p, testSalt); err == nil || !strings.Contains(err.Error(), "p.yaml") {
		t.Fatalf("err = %v, want one naming p.yaml", err)
	}
}
