package main

import "testing"

// A line as podwatch -o json prints it.
const addedLine = `{"kind":"Event","apiVersion":"v1","metadata":{"name":"ul-00001-userlatency.18eec30fa279e188","namespace":"kube-system"},"involvedObject":{"kind":"Pod","namespace":"kube-system","name":"ul-00001-userlatency","apiVersion":"v1"},"reason":"StaticPodAdded","message":"ul-00001.yaml: static pod kube-system/ul-00001-userlatency added","type":"Normal"}` + "\n"

func TestIsAdded(t *testing.T) {
	for _, c := range []struct {
		name, line, pod string
		want            bool
	}{
		{"its ADD", addedLine, "ul-00001-userlatency", true},
		{"another pod's ADD", addedLine, "ul-00002-userlatency", false},
		{"a prefix of the name", addedLine, "ul-00001", false},
		{"another reason", `{"involvedObject":{"kind":"Pod","namespace":"kube-system","name":"ul-00001-userlatency"},"reason":"StaticPodUpdated"}`, "ul-00001-userlatency", false},
		{"another namespace", `{"involvedObject":{"kind":"Pod","namespace":"default","name":"ul-00001-userlatency"},"reason":"StaticPodAdded"}`, "ul-00001-userlatency", false},
		{"not JSON", "ul-00001-userlatency StaticPodAdded\n", "ul-00001-userlatency", false},
	} {
		if got := isAdded([]byte(c.line), "kube-system", c.pod); got != c.want {
			t.Errorf("%s: isAdded = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFloorLineRoundTrip(t *testing.T) {
	l := floorLine("ul-00001.yaml", 312) + "\n"
	if l != "ul-00001.yaml 312\n" {
		t.Errorf("floorLine = %q", l)
	}
	if !isFloor([]byte(l), "ul-00001.yaml") {
		t.Errorf("isFloor(%q, its own file) = false", l)
	}
	for _, other := range []string{"ul-00001", "ul-00001.yaml.tmp", "ul-00002.yaml"} {
		if isFloor([]byte(l), other) {
			t.Errorf("isFloor(%q, %q) = true", l, other)
		}
	}
	if isFloor([]byte("ready\n"), "ready") {
		t.Error("the ready line matched as a file's line")
	}
}
