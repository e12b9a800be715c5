// Package testutil holds what podwatch's tests share across packages: a
// buffer that goroutines may write while a test reads it, and readers of
// the metrics endpoint. Only tests import it.
package testutil
