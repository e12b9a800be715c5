package cri

import (
	"reflect"
	"slices"
	"testing"
)

// Client must never grow a call that changes what the runtime runs: the
// socket is root-equivalent, and podwatch only ever reads through it.
func TestClientHoldsOnlyReadCalls(t *testing.T) {
	allowed := []string{
		"Close", "ContainerStatus", "Endpoint", "GetContainerEvents", "ListContainers", "ListPodSandbox", "PodSandboxStatus",
	}
	typ := reflect.TypeFor[*Client]()
	var got []string
	for i := range typ.NumMethod() {
		got = append(got, typ.Method(i).Name)
	}
	if !slices.Equal(got, allowed) {
		t.Fatalf("*cri.Client has methods %v, want exactly %v (read calls only)", got, allowed)
	}
	// The generated client, which can run, stop and exec, stays unexported.
	for i := range typ.Elem().NumField() {
		if f := typ.Elem().Field(i); f.IsExported() {
			t.Errorf("exported field %s would hand out %v", f.Name, f.Type)
		}
	}
}
