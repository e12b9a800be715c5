package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/podwatch/podwatch/pkg/events"
	"github.com/podwatch/podwatch/pkg/kube"
)

// kubeSinkName labels the API sink in stats and logs.
const kubeSinkName = "api"

// restoreTimeout bounds the warm start's reads from the API.
const restoreTimeout = 10 * time.Second

// setupKube adds the Kubernetes API sink when a cluster is configured
// (--kubeconfig, or in a pod) and returns the sinks to register and the
// Events to restore: restore (the local store's) plus what this node wrote
// to the API about objects the store has nothing on, when it may list them.
// pods are the published static pods, looked up too when the store knows
// nothing of them. It also returns the client, from which the follower
// reads mirror pods. With no cluster it returns (nil, restore, nil, nil):
// stdout and the local store carry on alone.
func setupKube(ctx context.Context, opts kube.Options, node string, clk clock.Clock, log *slog.Logger, restore []v1.Event, pods ...v1.ObjectReference) ([]events.Registration, []v1.Event, kube.API, error) {
	cfg, err := opts.Config(os.Getenv)
	if err != nil {
		return nil, restore, nil, err
	}
	if cfg == nil {
		log.Info("no --kubeconfig and not in a pod: Events go to stdout and the local store only")
		return nil, restore, nil, nil
	}
	client, err := kube.NewClient(cfg)
	if err != nil {
		return nil, restore, nil, err
	}
	sink, err := kube.NewSink(client, kube.SinkOptions{Node: node}, clk, log)
	if err != nil {
		return nil, restore, nil, fmt.Errorf("kube sink: %w", err)
	}
	log.Info("sending Events to the Kubernetes API", "host", cfg.Host, "config", opts.Source(os.Getenv), "qps", cfg.QPS, "burst", cfg.Burst)
	// Warm start is best effort: an API that does not answer must not hold
	// up the agent, whose local store and stdout work without it.
	rctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	restore = kube.Restore(rctx, client, node, restore, log, pods...)
	return []events.Registration{events.DeliverTo(kubeSinkName, sink)}, restore, client, nil
}

// kubeSinkOf returns the API sink among regs, whose Run moves pod change
// Events to their new mirror pod; nil when there is none.
func kubeSinkOf(regs []events.Registration) *kube.Sink {
	for _, r := range regs {
		if s, ok := r.Sink.(*kube.Sink); ok {
			return s
		}
	}
	return nil
}
