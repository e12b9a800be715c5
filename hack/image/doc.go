// Command image builds podwatch's container image without a container
// engine: one layer holding the static binary at /podwatch on an empty base,
// written as a tarball that `docker load`, `podman load` and
// `ctr -n k8s.io images import` take, and that `crane push` sends to a
// registry. It is its own module so that the agent does not depend on
// go-containerregistry.
package main
