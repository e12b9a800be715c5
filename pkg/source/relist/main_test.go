package relist

import (
	"testing"

	"go.uber.org/goleak"
)

// Run owns the watch's goroutine; none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
