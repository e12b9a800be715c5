package kube

import (
	"testing"

	"go.uber.org/goleak"
)

// Sink.Run owns a goroutine; none may outlive a test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
