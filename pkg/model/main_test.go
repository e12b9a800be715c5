package model

import (
	"testing"

	"go.uber.org/goleak"
)

// The snapshot tests run podwatch's file source, whose goroutines must
// all be gone when they end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
