// Package agent is podwatch's node agent as one component: it wires the
// file source, the diff loop, the event recorder and its sinks, the
// published state's persister, the metrics server and, with a CRI socket,
// the follower that takes each change to the running pod, and owns their
// goroutines from Run to the end of the shutdown.
//
// Run first takes the state dir; while another podwatch holds it, the agent
// stands by, not ready and announcing nothing, and takes over once it is
// free. Startup state flows one way: Run loads the published state and the stored
// Events (and, with an API sink, what the API holds that the store lacks)
// and passes them into the constructors; nothing downstream calls back.
// On cancel, pending Event writes are flushed and the last published state
// saved, both within Options.ShutdownTimeout.
package agent
