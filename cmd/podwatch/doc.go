// Command podwatch watches the kubelet's static pod manifest folder and
// records, as Kubernetes Events, what the kubelet will do with it and why.
//
// main holds flags, wiring and signals: the agent itself is pkg/agent, and
// the subcommands' work is in pkg/lint and pkg/store.
package main
