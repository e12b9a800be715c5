package events

import (
	"testing"

	"go.uber.org/goleak"
)

// Run and Flush own goroutines; none may outlive a test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
