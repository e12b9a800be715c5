package types

import "time"

// FollowCause is what the follower sees instead of the outcome a change
// asked for, in a word a metric label can hold: a closed set, so that a
// series per cause exists from the start and the count of series stays
// fixed however many pods a node runs.
type FollowCause string

// The causes, from the runtime down to one container. When several
// containers fall short, the first in the pod's order gives the cause.
const (
	// CauseRuntimeUnavailable: the container runtime does not answer.
	CauseRuntimeUnavailable FollowCause = "runtime_unavailable"
	// CauseOldPodRunning: no sandbox since the change, and the old pod's
	// sandbox is still ready (the new one waits for it to stop).
	CauseOldPodRunning FollowCause = "old_pod_running"
	// CauseNoSandbox: no sandbox since the change, and none of the pod
	// running.
	CauseNoSandbox FollowCause = "no_sandbox"
	// CauseSandboxNotReady: the new sandbox exists but is not ready.
	CauseSandboxNotReady FollowCause = "sandbox_not_ready"
	// CauseContainerNotCreated: a container of the pod is not created,
	// most often because its image is not pulled.
	CauseContainerNotCreated FollowCause = "container_not_created"
	// CauseContainerNotRunning: a container is created but not started,
	// not restarted with its new image, or in a state the runtime does not
	// name.
	CauseContainerNotRunning FollowCause = "container_not_running"
	// CauseContainerExited: a container exited with a code other than 0.
	CauseContainerExited FollowCause = "container_exited"
	// CauseStillRunning: a removed pod's sandbox is ready or one of its
	// containers runs.
	CauseStillRunning FollowCause = "still_running"
)

// FollowCauses lists every cause, in the order above; a function, so that
// no package-level table can be changed.
func FollowCauses() []FollowCause {
	return []FollowCause{CauseRuntimeUnavailable, CauseOldPodRunning, CauseNoSandbox, CauseSandboxNotReady,
		CauseContainerNotCreated, CauseContainerNotRunning, CauseContainerExited, CauseStillRunning}
}

// FollowOverdue is one kind of change past its deadline: the warning it
// gets (ReasonNotStarted or ReasonNotStopped) and what is seen instead.
type FollowOverdue struct {
	Reason string
	Cause  FollowCause
}

// FollowReport is one Event the follower reported.
type FollowReport struct {
	Reason string
	Type   string
	// Took is the time from the change to the outcome, for ReasonStarted
	// and ReasonStopped; zero otherwise.
	Took time.Duration
}

// FollowObservation is what the follower found in one poll of the
// container runtime, for pkg/metrics.
type FollowObservation struct {
	// RuntimeErr is why the poll failed; nil when the runtime answered.
	RuntimeErr error
	// Overdue counts the pods whose followed change is past its deadline,
	// as of this poll; a kind absent here counts none.
	Overdue map[FollowOverdue]int
	// Reports are the Events the poll reported, in order.
	Reports []FollowReport
}
