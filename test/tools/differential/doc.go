// Package differential plays scripted changes to a static-pod folder to the
// kubelet's own file source and to podwatch at the same time, and compares
// what each says happens to every pod: it appears, it restarts (a new UID),
// it is updated in place (a UID pinned by the manifest), it goes.
//
// The kubelet's answer is not typed in anywhere: it is read from the UIDs in
// the updates that config.PodConfig sends, so a scenario file only describes
// steps (testdata/scenarios, in the language documented in scenario.go) and
// the kubelet is the judge.
//
// TestPortAgreesWithTheKubelet holds pkg/model, podwatch's port of the
// kubelet's file source and merge, to the same code the same way: both
// sides on one folder, every step on the watch, PodUpdate by PodUpdate.
//
// TestEngineFuzz holds podwatch's diff to the same code by its claims:
// random changes played to both, podwatch's snapshots stepped through
// diff.Advance, and each pod's ADD, UPDATE and REMOVE in the kubelet's pod
// config required to fall within the claims the diff made of it
// (test/tools/claimcheck).
//
// The kubelet's file source cannot be stopped and keeps an inotify instance
// for good, so each scenario runs in a process of its own (the test binary,
// re-executed); Run is what that process does.
package differential
