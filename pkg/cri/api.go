package cri

// The CRI's messages that podwatch reads, with the fields it uses and the
// CRI's own names (k8s.io/cri-api's runtime.v1), so that code written
// against the generated types reads the same. Fields the runtime sends
// and podwatch does not use are skipped when decoding. The getters are nil
// safe, as the generated ones are.

// PodSandboxState is a sandbox's state.
type PodSandboxState int32

// The sandbox states, as the CRI numbers them.
const (
	PodSandboxState_SANDBOX_READY    PodSandboxState = 0
	PodSandboxState_SANDBOX_NOTREADY PodSandboxState = 1
)

// ContainerState is a container's state.
type ContainerState int32

// The container states, as the CRI numbers them.
const (
	ContainerState_CONTAINER_CREATED ContainerState = 0
	ContainerState_CONTAINER_RUNNING ContainerState = 1
	ContainerState_CONTAINER_EXITED  ContainerState = 2
	ContainerState_CONTAINER_UNKNOWN ContainerState = 3
)

// ContainerEventType is what happened to a container in an event.
type ContainerEventType int32

// The container event types, as the CRI numbers them.
const (
	ContainerEventType_CONTAINER_CREATED_EVENT ContainerEventType = 0
	ContainerEventType_CONTAINER_STARTED_EVENT ContainerEventType = 1
	ContainerEventType_CONTAINER_STOPPED_EVENT ContainerEventType = 2
	ContainerEventType_CONTAINER_DELETED_EVENT ContainerEventType = 3
)

// PodSandboxMetadata names a sandbox's pod.
type PodSandboxMetadata struct {
	Name      string
	Uid       string
	Namespace string
	Attempt   uint32
}

// PodSandbox is a sandbox as ListPodSandbox gives it.
type PodSandbox struct {
	Id          string
	Metadata    *PodSandboxMetadata
	State       PodSandboxState
	CreatedAt   int64 // Unix nanoseconds
	Labels      map[string]string
	Annotations map[string]string
}

// PodSandboxStatus is a sandbox's status, as PodSandboxStatus and the
// container events give it.
type PodSandboxStatus struct {
	Id          string
	Metadata    *PodSandboxMetadata
	State       PodSandboxState
	CreatedAt   int64
	Labels      map[string]string
	Annotations map[string]string
}

// ContainerMetadata names a container and counts its restarts.
type ContainerMetadata struct {
	Name    string
	Attempt uint32
}

// ImageSpec is the image a container runs, as the kubelet asked for it.
type ImageSpec struct {
	Image              string
	UserSpecifiedImage string
}

// Container is a container as ListContainers gives it.
type Container struct {
	Id           string
	PodSandboxId string
	Metadata     *ContainerMetadata
	Image        *ImageSpec
	ImageRef     string
	State        ContainerState
	CreatedAt    int64
	Labels       map[string]string
	Annotations  map[string]string
}

// ContainerStatus is a container's status: what ListContainers says, and
// how and when it ended.
type ContainerStatus struct {
	Id          string
	Metadata    *ContainerMetadata
	State       ContainerState
	CreatedAt   int64
	StartedAt   int64
	FinishedAt  int64
	ExitCode    int32
	Image       *ImageSpec
	ImageRef    string
	Reason      string
	Message     string
	Labels      map[string]string
	Annotations map[string]string
}

// ContainerEventResponse is one event of GetContainerEvents.
type ContainerEventResponse struct {
	ContainerId        string
	ContainerEventType ContainerEventType
	CreatedAt          int64
	PodSandboxStatus   *PodSandboxStatus
	ContainersStatuses []*ContainerStatus
}

// PodSandboxFilter narrows ListPodSandbox; its fields are ANDed.
type PodSandboxFilter struct {
	Id            string
	State         *PodSandboxState
	LabelSelector map[string]string
}

// ContainerFilter narrows ListContainers; its fields are ANDed.
type ContainerFilter struct {
	Id            string
	State         *ContainerState
	PodSandboxId  string
	LabelSelector map[string]string
}

// ContainerEventStream is the open stream of GetContainerEvents.
type ContainerEventStream interface {
	// Recv returns the next event; io.EOF when the runtime ended the
	// stream.
	Recv() (*ContainerEventResponse, error)
}

func (m *PodSandboxMetadata) GetName() string {
	if m == nil {
		return ""
	}
	return m.Name
}

func (m *PodSandboxMetadata) GetUid() string {
	if m == nil {
		return ""
	}
	return m.Uid
}

func (m *PodSandboxMetadata) GetNamespace() string {
	if m == nil {
		return ""
	}
	return m.Namespace
}

func (m *PodSandboxMetadata) GetAttempt() uint32 {
	if m == nil {
		return 0
	}
	return m.Attempt
}

func (m *PodSandbox) GetId() string {
	if m == nil {
		return ""
	}
	return m.Id
}

func (m *PodSandbox) GetMetadata() *PodSandboxMetadata {
	if m == nil {
		return nil
	}
	return m.Metadata
}

func (m *PodSandbox) GetState() PodSandboxState {
	if m == nil {
		return PodSandboxState_SANDBOX_READY
	}
	return m.State
}

func (m *PodSandbox) GetCreatedAt() int64 {
	if m == nil {
		return 0
	}
	return m.CreatedAt
}

func (m *PodSandbox) GetLabels() map[string]string {
	if m == nil {
		return nil
	}
	return m.Labels
}

func (m *PodSandbox) GetAnnotations() map[string]string {
	if m == nil {
		return nil
	}
	return m.Annotations
}

func (m *PodSandboxStatus) GetId() string {
	if m == nil {
		return ""
	}
	return m.Id
}

func (m *PodSandboxStatus) GetMetadata() *PodSandboxMetadata {
	if m == nil {
		return nil
	}
	return m.Metadata
}

func (m *PodSandboxStatus) GetState() PodSandboxState {
	if m == nil {
		return PodSandboxState_SANDBOX_READY
	}
	return m.State
}

func (m *PodSandboxStatus) GetCreatedAt() int64 {
	if m == nil {
		return 0
	}
	return m.CreatedAt
}

func (m *PodSandboxStatus) GetLabels() map[string]string {
	if m == nil {
		return nil
	}
	return m.Labels
}

func (m *PodSandboxStatus) GetAnnotations() map[string]string {
	if m == nil {
		return nil
	}
	return m.Annotations
}

func (m *ContainerMetadata) GetName() string {
	if m == nil {
		return ""
	}
	return m.Name
}

func (m *ContainerMetadata) GetAttempt() uint32 {
	if m == nil {
		return 0
	}
	return m.Attempt
}

func (m *ImageSpec) GetImage() string {
	if m == nil {
		return ""
	}
	return m.Image
}

func (m *ImageSpec) GetUserSpecifiedImage() string {
	if m == nil {
		return ""
	}
	return m.UserSpecifiedImage
}

func (m *Container) GetId() string {
	if m == nil {
		return ""
	}
	return m.Id
}

func (m *Container) GetPodSandboxId() string {
	if m == nil {
		return ""
	}
	return m.PodSandboxId
}

func (m *Container) GetMetadata() *ContainerMetadata {
	if m == nil {
		return nil
	}
	return m.Metadata
}

func (m *Container) GetImage() *ImageSpec {
	if m == nil {
		return nil
	}
	return m.Image
}

func (m *Container) GetImageRef() string {
	if m == nil {
		return ""
	}
	return m.ImageRef
}

func (m *Container) GetState() ContainerState {
	if m == nil {
		return ContainerState_CONTAINER_CREATED
	}
	return m.State
}

func (m *Container) GetCreatedAt() int64 {
	if m == nil {
		return 0
	}
	return m.CreatedAt
}

func (m *Container) GetLabels() map[string]string {
	if m == nil {
		return nil
	}
	return m.Labels
}

func (m *Container) GetAnnotations() map[string]string {
	if m == nil {
		return nil
	}
	return m.Annotations
}

func (m *ContainerStatus) GetId() string {
	if m == nil {
		return ""
	}
	return m.Id
}

func (m *ContainerStatus) GetMetadata() *ContainerMetadata {
	if m == nil {
		return nil
	}
	return m.Metadata
}

func (m *ContainerStatus) GetState() ContainerState {
	if m == nil {
		return ContainerState_CONTAINER_CREATED
	}
	return m.State
}

func (m *ContainerStatus) GetCreatedAt() int64 {
	if m == nil {
		return 0
	}
	return m.CreatedAt
}

func (m *ContainerStatus) GetStartedAt() int64 {
	if m == nil {
		return 0
	}
	return m.StartedAt
}

func (m *ContainerStatus) GetFinishedAt() int64 {
	if m == nil {
		return 0
	}
	return m.FinishedAt
}

func (m *ContainerStatus) GetExitCode() int32 {
	if m == nil {
		return 0
	}
	return m.ExitCode
}

func (m *ContainerStatus) GetImage() *ImageSpec {
	if m == nil {
		return nil
	}
	return m.Image
}

func (m *ContainerStatus) GetReason() string {
	if m == nil {
		return ""
	}
	return m.Reason
}

func (m *ContainerStatus) GetMessage() string {
	if m == nil {
		return ""
	}
	return m.Message
}

func (m *ContainerStatus) GetLabels() map[string]string {
	if m == nil {
		return nil
	}
	return m.Labels
}

func (m *ContainerStatus) GetAnnotations() map[string]string {
	if m == nil {
		return nil
	}
	return m.Annotations
}

func (m *ContainerEventResponse) GetContainerId() string {
	if m == nil {
		return ""
	}
	return m.ContainerId
}

func (m *ContainerEventResponse) GetContainerEventType() ContainerEventType {
	if m == nil {
		return ContainerEventType_CONTAINER_CREATED_EVENT
	}
	return m.ContainerEventType
}

func (m *ContainerEventResponse) GetCreatedAt() int64 {
	if m == nil {
		return 0
	}
	return m.CreatedAt
}

func (m *ContainerEventResponse) GetPodSandboxStatus() *PodSandboxStatus {
	if m == nil {
		return nil
	}
	return m.PodSandboxStatus
}

func (m *ContainerEventResponse) GetContainersStatuses() []*ContainerStatus {
	if m == nil {
		return nil
	}
	return m.ContainersStatuses
}
