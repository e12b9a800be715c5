package main

import (
	"testing"

	"go.uber.org/goleak"
)

// run owns the file source's goroutines; none may outlive a test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
