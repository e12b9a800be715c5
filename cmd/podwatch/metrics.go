package main

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"github.com/podwatch/podwatch/pkg/metrics"
)

// startMetrics binds --metrics-bind-address before the agent starts work,
// so a port in use fails the start with a clear error rather than a
// goroutine later, then serves until stop (or ctx) ends it. stop waits for
// the server, so no goroutine outlives run; it returns the server's error.
// When the address is "0" nothing is bound, addr is nil and stop does
// nothing.
func startMetrics(ctx context.Context, opts metrics.Options, m *metrics.Metrics, log *slog.Logger) (addr net.Addr, stop func() error, err error) {
	srv, err := metrics.NewServer(opts, m, log)
	if err != nil {
		return nil, nil, err
	}
	addr, err = srv.Listen()
	if errors.Is(err, metrics.ErrDisabled) {
		return nil, func() error { return nil }, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	return addr, func() error {
		cancel()
		return <-done
	}, nil
}
