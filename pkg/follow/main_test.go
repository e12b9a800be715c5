package follow

import (
	"testing"

	"go.uber.org/goleak"
)

// Run owns the follower's goroutine, and the CRI tests a gRPC server and
// client; none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
