package cri

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// cri-client's fake ends the stream of container events at once: the
// client hands that on as io.EOF, which the follower takes for a runtime
// that does not stream, and the stream's goroutines end with its context.
func TestContainerEventsFromTheFakeEndAtOnce(t *testing.T) {
	_, endpoint := serveFake(t)
	cl := newClient(t, endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := cl.GetContainerEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("Recv = %v, %v; want io.EOF", e, err)
	}
}
