// Command podwatch watches the kubelet's static pod manifest folder and
// records, as Kubernetes Events, what the kubelet will do with it and why.
//
// main only builds options and calls run; everything it wires is in pkg/.
package main
