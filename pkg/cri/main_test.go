package cri

import (
	"testing"

	"go.uber.org/goleak"
)

// A Client's connection runs HTTP/2 goroutines until Close; none may
// outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
