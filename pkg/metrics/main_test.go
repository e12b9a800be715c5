package metrics

import (
	"testing"

	"go.uber.org/goleak"
)

// Server.Run owns goroutines (the HTTP server, its connections); none may
// outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
