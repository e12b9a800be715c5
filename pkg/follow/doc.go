// Package follow follows each static pod change podwatch publishes to the
// pod the container runtime runs, and says whether the kubelet did what the
// change asked for: StaticPodStarted when the pod of an ADD or UPDATE runs,
// StaticPodNotStarted (again, with a growing count, while it lasts) when it
// does not by Options.Deadline, StaticPodStopped or StaticPodNotStopped
// for a REMOVE, and StaticPodRestarting when a static pod's container
// restarts with no manifest change. It also words StaticPodFound, the
// inventory of a first start with no published state, from what its
// first poll sees (found.go).
//
// It is a stage after pkg/diff: the agent hands it the changes it records
// (Submit never blocks the diff loop), and it reports through the same
// Emit as every other change, so the events pipeline compresses and
// delivers its Events. Nothing it finds flows back to the diff.
//
// What "runs the change" means, read from the runtime through Runtime:
//
//   - a new UID (any UPDATE without metadata.uid, and every ADD): the pod's
//     newest sandbox (found by the kubelet's io.kubernetes.pod.name and
//     .namespace labels) was created after the change and is READY, and the
//     newest container of each of the pod's containers in it has been
//     running for Options.MinRunning (one that crashes just after it starts
//     did not start the pod), or exited 0 (done); given MirrorPods, a
//     container with a readiness probe must also be ready in the status of
//     the mirror pod of that UID, when the kubelet has made it (the runtime
//     cannot tell). podwatch does not compute the UID the kubelet derives
//     from the content; it learns it from that sandbox's
//     io.kubernetes.pod.uid label. The runtime's clock and podwatch's are
//     the node's, but podwatch sees a file a moment after the kubelet may
//     have, so "after" allows createdSlack. For an UPDATE a UID with a
//     sandbox from before the change is an old pod's, and only a sandbox
//     created after the change counts; but a change made at a relist
//     podwatch saw is dated by its read of the relist's folder open, late,
//     so a UID first seen within relistLate before that is the answer's.
//   - metadata.uid set and that pod already running (an in-place update):
//     the kubelet restarts only the containers whose
//     io.kubernetes.container.hash changes, and that hash covers just the
//     name and the image (ContainerHash computes it; a test in
//     test/tools/kubelet holds it to the kubelet's). The pod runs already
//     when a ready sandbox of that UID was made before podwatch saw the
//     change, however shortly before (createdSlack does not apply: the
//     kubelet makes a new UID's sandbox only once the old pod has stopped).
//     At the first poll after the change the follower records the
//     containers created before it (but for one made within createdSlack
//     that already runs the new image: the kubelet's answer): IDs, hash and
//     the image the kubelet asked for. A container restarts when
//     its image changed (from ImageSpec.UserSpecifiedImage, or, when the
//     runtime leaves that empty, from the old hash against ContainerHash of
//     the new image; with neither, every container is taken as restarted:
//     a late warning, never a false start). Each must then have a container
//     created after the change, with an ID not recorded and a hash other
//     than the old one (a crash restart of the old container keeps the
//     old hash), and the others still run; an update that restarts nothing
//     is not followed.
//   - an UPDATE that a relist podwatch did not see makes, taking back the
//     pod the kubelet ran before a watch event (types.TakeBack: At is
//     podwatch's own relist, and the kubelet's may have come, and the pod
//     started, long before): the pod taken back is known by the UID of the
//     newest sandbox created before the watch event, when that sandbox was
//     created after the kubelet began to run it (a new UID's sandbox comes
//     only once the old pod stopped, so it is no other pod's), and the
//     newest one before that beginning has another UID (the pod before
//     was not still starting then). Then the
//     newest sandbox counts only with that UID and created after the watch
//     event, before At or after (one before At is timed from the event);
//     the watch event's own pod never does.
//     When podwatch did not see the kubelet begin to run that pod either,
//     the last pod taken back whose UID the follower found, from the same
//     file and content, gives the UID, and its watch event stands for that
//     beginning. When the UID is not known the change is judged as any
//     other.
//   - REMOVE: no sandbox of the pod is READY and none of its containers
//     runs.
//
// The time in StaticPodStarted is from the change to the creation of the
// last sandbox or container the verdict rests on, as the runtime stamps
// them, so it does not depend on the poll interval. The runtime stamps no
// time on a sandbox that stops, so StaticPodStopped is timed to the poll
// that saw it.
//
// Past its deadline a change that has not happened is reported again every
// Deadline, with the same message while the same thing is seen, so the
// events package counts it on one Event; the message says what is seen
// (the old pod still running, no sandbox, a container not created, or
// exited with its code and reason), not how long it has been. Why a
// container waits and what it said when it terminated are not in the
// runtime but in the pod status, which a kubelet with an API server
// publishes in the mirror pod: given MirrorPods, a warning about a
// container adds what the status of the mirror pod for the judged UID
// says (see mirror.go). The mirror pod is read only then, and for the
// readiness of a pod whose containers run.
//
// A newer change to the same pod supersedes the one being followed: only
// the newest is judged and reported.
//
// With no container runtime to read, NewFromMirrorPods reads the mirror
// pods instead, shown to the same rules as the runtime's sandboxes and
// containers (see mirrorsource.go).
//
// After each poll the Observer (pkg/metrics) is told what it found: the
// poll's error, the pods past their deadline by what is seen instead (a
// types.FollowCause), and what was reported.
//
// The runtime is polled every Options.PollInterval while a change waits
// for its deadline and every Options.IdlePollInterval otherwise (one
// ListPodSandbox and one ListContainers per poll; ContainerStatus only for
// an exited container whose exit code is wanted). A runtime that streams
// container events (Events) has each event about a static pod's container
// bring the next poll forward; the events are never judged themselves
// (see events.go).
package follow
