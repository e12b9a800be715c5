package e2e

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// run owns the file source's goroutines; none may outlive a test.
func TestMain(m *testing.M) {
	if mode := os.Getenv(holdInotifyEnv); mode != "" {
		holdInotify(mode) // a helper process of TestFaultInotify...: never returns
	}
	if sock := os.Getenv(probeSocketEnv); sock != "" {
		probeSocket(sock) // a helper process of TestCRISocketAccessOfTheInstalls: exits
	}
	goleak.VerifyTestMain(m)
}
