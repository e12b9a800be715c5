package cri

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf wire format of the messages in api.go, written out by field
// number (k8s.io/cri-api's api.proto) rather than generated: the generated
// code links protobuf's reflection and registers every CRI message at
// start, which a node agent that reads a handful of fields pays for in
// memory on every node, also where no runtime is followed.

// errWire: a message that is not valid protobuf.
var errWire = errors.New("cri: malformed message")

// fields calls f with each field of msg; f consumes the field's value
// from b, which starts at the value, and returns how many bytes it took,
// or a negative number to have the field skipped.
func fields(msg []byte, f func(num protowire.Number, typ protowire.Type, b []byte) int) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return fmt.Errorf("%w: %w", errWire, protowire.ParseError(n))
		}
		msg = msg[n:]
		m := f(num, typ, msg)
		if m < 0 {
			m = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if m < 0 {
			return fmt.Errorf("%w: field %d: %w", errWire, num, protowire.ParseError(m))
		}
		msg = msg[m:]
	}
	return nil
}

// decoder reads one message's fields into Go values; its first error
// stays.
type decoder struct{ err error }

// skip is what a field reader returns for a field it does not take, or
// one of the wrong wire type, which protobuf skips as unknown.
const skip = -1

func (d *decoder) str(typ protowire.Type, b []byte, dst *string) int {
	if typ != protowire.BytesType {
		return skip
	}
	v, n := protowire.ConsumeBytes(b)
	if n >= 0 {
		*dst = string(v)
	}
	return n
}

func (d *decoder) varint(typ protowire.Type, b []byte) (uint64, int) {
	if typ != protowire.VarintType {
		return 0, skip
	}
	return protowire.ConsumeVarint(b)
}

func (d *decoder) int64(typ protowire.Type, b []byte, dst *int64) int {
	v, n := d.varint(typ, b)
	if n >= 0 {
		*dst = int64(v)
	}
	return n
}

func (d *decoder) int32(typ protowire.Type, b []byte, dst *int32) int {
	v, n := d.varint(typ, b)
	if n >= 0 {
		*dst = int32(v)
	}
	return n
}

func (d *decoder) uint32(typ protowire.Type, b []byte, dst *uint32) int {
	v, n := d.varint(typ, b)
	if n >= 0 {
		*dst = uint32(v)
	}
	return n
}

// message consumes an embedded message and decodes it with dec.
func (d *decoder) message(typ protowire.Type, b []byte, dec func([]byte) error) int {
	if typ != protowire.BytesType {
		return skip
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return n
	}
	if err := dec(v); err != nil && d.err == nil {
		d.err = err
	}
	return n
}

// entry consumes one entry of a map<string, string> into *m.
func (d *decoder) entry(typ protowire.Type, b []byte, m *map[string]string) int {
	return d.message(typ, b, func(v []byte) error {
		var k, val string
		var e decoder
		err := fields(v, func(num protowire.Number, typ protowire.Type, b []byte) int {
			switch num {
			case 1:
				return e.str(typ, b, &k)
			case 2:
				return e.str(typ, b, &val)
			}
			return skip
		})
		if err != nil {
			return err
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = val
		return nil
	})
}

// decode runs the field reader f over msg and returns the first error.
func decode(msg []byte, f func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int) error {
	var d decoder
	if err := fields(msg, func(num protowire.Number, typ protowire.Type, b []byte) int {
		return f(&d, num, typ, b)
	}); err != nil {
		return err
	}
	return d.err
}

func decodePodSandboxMetadata(msg []byte, m *PodSandboxMetadata) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.Name)
		case 2:
			return d.str(typ, b, &m.Uid)
		case 3:
			return d.str(typ, b, &m.Namespace)
		case 4:
			return d.uint32(typ, b, &m.Attempt)
		}
		return skip
	})
}

func decodeContainerMetadata(msg []byte, m *ContainerMetadata) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.Name)
		case 2:
			return d.uint32(typ, b, &m.Attempt)
		}
		return skip
	})
}

func decodeImageSpec(msg []byte, m *ImageSpec) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.Image)
		case 18:
			return d.str(typ, b, &m.UserSpecifiedImage)
		}
		return skip
	})
}

// podSandboxMetadata, containerMetadata and imageSpec read an embedded
// message into a new value at *dst.
func (d *decoder) podSandboxMetadata(typ protowire.Type, b []byte, dst **PodSandboxMetadata) int {
	return d.message(typ, b, func(v []byte) error {
		*dst = &PodSandboxMetadata{}
		return decodePodSandboxMetadata(v, *dst)
	})
}

func (d *decoder) containerMetadata(typ protowire.Type, b []byte, dst **ContainerMetadata) int {
	return d.message(typ, b, func(v []byte) error {
		*dst = &ContainerMetadata{}
		return decodeContainerMetadata(v, *dst)
	})
}

func (d *decoder) imageSpec(typ protowire.Type, b []byte, dst **ImageSpec) int {
	return d.message(typ, b, func(v []byte) error {
		*dst = &ImageSpec{}
		return decodeImageSpec(v, *dst)
	})
}

func decodePodSandbox(msg []byte, m *PodSandbox) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.Id)
		case 2:
			return d.podSandboxMetadata(typ, b, &m.Metadata)
		case 3:
			return d.int32(typ, b, (*int32)(&m.State))
		case 4:
			return d.int64(typ, b, &m.CreatedAt)
		case 5:
			return d.entry(typ, b, &m.Labels)
		case 6:
			return d.entry(typ, b, &m.Annotations)
		}
		return skip
	})
}

func decodePodSandboxStatus(msg []byte, m *PodSandboxStatus) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.Id)
		case 2:
			return d.podSandboxMetadata(typ, b, &m.Metadata)
		case 3:
			return d.int32(typ, b, (*int32)(&m.State))
		case 4:
			return d.int64(typ, b, &m.CreatedAt)
		case 7:
			return d.entry(typ, b, &m.Labels)
		case 8:
			return d.entry(typ, b, &m.Annotations)
		}
		return skip
	})
}

func decodeContainer(msg []byte, m *Container) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.Id)
		case 2:
			return d.str(typ, b, &m.PodSandboxId)
		case 3:
			return d.containerMetadata(typ, b, &m.Metadata)
		case 4:
			return d.imageSpec(typ, b, &m.Image)
		case 5:
			return d.str(typ, b, &m.ImageRef)
		case 6:
			return d.int32(typ, b, (*int32)(&m.State))
		case 7:
			return d.int64(typ, b, &m.CreatedAt)
		case 8:
			return d.entry(typ, b, &m.Labels)
		case 9:
			return d.entry(typ, b, &m.Annotations)
		}
		return skip
	})
}

func decodeContainerStatus(msg []byte, m *ContainerStatus) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.Id)
		case 2:
			return d.containerMetadata(typ, b, &m.Metadata)
		case 3:
			return d.int32(typ, b, (*int32)(&m.State))
		case 4:
			return d.int64(typ, b, &m.CreatedAt)
		case 5:
			return d.int64(typ, b, &m.StartedAt)
		case 6:
			return d.int64(typ, b, &m.FinishedAt)
		case 7:
			return d.int32(typ, b, &m.ExitCode)
		case 8:
			return d.imageSpec(typ, b, &m.Image)
		case 9:
			return d.str(typ, b, &m.ImageRef)
		case 10:
			return d.str(typ, b, &m.Reason)
		case 11:
			return d.str(typ, b, &m.Message)
		case 12:
			return d.entry(typ, b, &m.Labels)
		case 13:
			return d.entry(typ, b, &m.Annotations)
		}
		return skip
	})
}

func decodeContainerEvent(msg []byte, m *ContainerEventResponse) error {
	return decode(msg, func(d *decoder, num protowire.Number, typ protowire.Type, b []byte) int {
		switch num {
		case 1:
			return d.str(typ, b, &m.ContainerId)
		case 2:
			return d.int32(typ, b, (*int32)(&m.ContainerEventType))
		case 3:
			return d.int64(typ, b, &m.CreatedAt)
		case 4:
			return d.message(typ, b, func(v []byte) error {
				m.PodSandboxStatus = &PodSandboxStatus{}
				return decodePodSandboxStatus(v, m.PodSandboxStatus)
			})
		case 5:
			return d.message(typ, b, func(v []byte) error {
				s := &ContainerStatus{}
				m.ContainersStatuses = append(m.ContainersStatuses, s)
				return decodeContainerStatus(v, s)
			})
		}
		return skip
	})
}

// decodeList decodes the repeated message field num of a response, each
// element with dec.
func decodeList[T any](msg []byte, num protowire.Number, dec func([]byte, *T) error) ([]*T, error) {
	var out []*T
	err := decode(msg, func(d *decoder, n protowire.Number, typ protowire.Type, b []byte) int {
		if n != num {
			return skip
		}
		return d.message(typ, b, func(v []byte) error {
			x := new(T)
			out = append(out, x)
			return dec(v, x)
		})
	})
	return out, err
}

// decodeOne decodes the message field num of a response with dec; nil if
// the response has none.
func decodeOne[T any](msg []byte, num protowire.Number, dec func([]byte, *T) error) (*T, error) {
	var out *T
	err := decode(msg, func(d *decoder, n protowire.Number, typ protowire.Type, b []byte) int {
		if n != num {
			return skip
		}
		return d.message(typ, b, func(v []byte) error {
			out = new(T)
			return dec(v, out)
		})
	})
	return out, err
}

// Requests: each is one message podwatch writes.

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendStringMap(b []byte, num protowire.Number, m map[string]string) []byte {
	for k, v := range m {
		var e []byte
		e = appendString(e, 1, k)
		e = appendString(e, 2, v)
		b = appendMessage(b, num, e)
	}
	return b
}

// appendState appends a {state: s} message (PodSandboxStateValue,
// ContainerStateValue) as field num.
func appendState(b []byte, num protowire.Number, s int32) []byte {
	var v []byte
	if s != 0 {
		v = protowire.AppendTag(v, 1, protowire.VarintType)
		v = protowire.AppendVarint(v, uint64(int64(s)))
	}
	return appendMessage(b, num, v)
}

// listPodSandboxRequest is a ListPodSandboxRequest.
func listPodSandboxRequest(f *PodSandboxFilter) []byte {
	if f == nil {
		return nil
	}
	var v []byte
	v = appendString(v, 1, f.Id)
	if f.State != nil {
		v = appendState(v, 2, int32(*f.State))
	}
	v = appendStringMap(v, 3, f.LabelSelector)
	return appendMessage(nil, 1, v)
}

// listContainersRequest is a ListContainersRequest.
func listContainersRequest(f *ContainerFilter) []byte {
	if f == nil {
		return nil
	}
	var v []byte
	v = appendString(v, 1, f.Id)
	if f.State != nil {
		v = appendState(v, 2, int32(*f.State))
	}
	v = appendString(v, 3, f.PodSandboxId)
	v = appendStringMap(v, 4, f.LabelSelector)
	return appendMessage(nil, 1, v)
}

// idRequest is a request whose only field is an ID (ContainerStatusRequest,
// PodSandboxStatusRequest), verbose left false.
func idRequest(id string) []byte {
	return appendString(nil, 1, id)
}
