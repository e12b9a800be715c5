package agent

import (
	"testing"

	"go.uber.org/goleak"
)

// Run owns every goroutine of the agent; none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
