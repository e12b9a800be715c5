package follow

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	"k8s.io/utils/dump"
)

// ContainerHash is the value the kubelet writes in a container's
// io.kubernetes.container.hash annotation for a container of that name and
// image: the kubelet restarts a container in place exactly when this
// changes. It covers the name and the image only, so podwatch can tell
// from a manifest which containers an in-place update restarts even when
// the runtime does not give back the image the kubelet asked for.
// test/tools/kubelet's TestContainerHashIsTheKubelets holds it to the
// kubelet's own function.
func ContainerHash(name, image string) string {
	b, err := json.Marshal(map[string]string{"name": name, "image": image})
	if err != nil {
		// A map of strings always marshals.
		panic(fmt.Sprintf("follow: marshal a container's name and image: %v", err))
	}
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", dump.ForHash(b))
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}
