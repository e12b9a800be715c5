package differential

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/podwatch/podwatch/pkg/diff"
	"github.com/podwatch/podwatch/pkg/source/file"
	"github.com/podwatch/podwatch/pkg/types"
)

// podwatchSide runs podwatch's file source and feeds every snapshot to
// diff.Compute, keeping the State and calling again when Compute asks to,
// as pkg/agent's loop does, and keeps the changes.
type podwatchSide struct {
	b    *board
	opts diff.Options
	done chan error // Run's result

	// Guarded by b.
	snaps    int // snapshots received
	relists  int // of which after a full list
	watchUp  bool
	watchErr error
	idle     bool // the last Compute left nothing waiting to settle
	batches  []batch
	markers  setOfName
	problems []string
}

func startPodwatch(ctx context.Context, dir, node string, relist, settle time.Duration) (*podwatchSide, error) {
	src, err := file.New(file.Options{Path: dir, NodeName: node, FileCheckFrequency: relist, SettleDelay: settle}, nil, nil)
	if err != nil {
		return nil, err
	}
	p := &podwatchSide{
		b:       newBoard(),
		opts:    diff.Options{NodeName: node, Path: dir, SettleDelay: settle, RelistPeriod: relist},
		done:    make(chan error, 1),
		markers: setOfName{},
	}
	snaps := make(chan types.Snapshot)
	go func() { p.done <- src.Run(ctx, snaps) }()
	go p.loop(ctx, snaps)
	return p, nil
}

func (p *podwatchSide) loop(ctx context.Context, snaps <-chan types.Snapshot) {
	var (
		state   diff.State
		snap    *types.Snapshot
		recheck *time.Timer
	)
	defer func() {
		if recheck != nil {
			recheck.Stop()
		}
	}()
	for {
		var due <-chan time.Time
		if recheck != nil {
			due = recheck.C
		}
		select {
		case <-ctx.Done():
			return
		case s := <-snaps:
			snap = &s
			p.b.update(func() {
				p.snaps++
				if s.Relist {
					p.relists++
				}
				p.watchUp, p.watchErr = s.Watch.Up, s.Watch.Err
			})
		case <-due:
		}
		if recheck != nil {
			recheck.Stop()
			recheck = nil
		}
		// Compute reads now against the snapshot's file times, which the
		// real clock wrote: so the real clock here too.
		now := time.Now()
		changes, next, at := diff.Compute(state, *snap, now, p.opts)
		bt := p.batch(state, next, changes)
		state = next
		if !at.IsZero() {
			recheck = time.NewTimer(max(at.Sub(now), time.Millisecond))
		}
		p.b.update(func() {
			p.idle = at.IsZero()
			if len(bt.ops)+len(bt.markers) > 0 {
				p.batches = append(p.batches, bt)
			}
			for _, m := range bt.markers {
				p.markers[m] = true
			}
			for _, ch := range changes {
				if ch.Op == "" {
					p.problems = append(p.problems, ch.Reason+": "+ch.Message)
				}
			}
		})
	}
}

// batch turns one Compute's pod changes into ops. An UPDATE that keeps a
// UID the manifest pins is the kubelet's in-place update; any other UPDATE
// is, by podwatch's contract, a restart under a new UID.
func (p *podwatchSide) batch(prev, next diff.State, changes []types.Change) batch {
	var bt batch
	for _, ch := range changes {
		if ch.Op == "" || ch.Object.Kind != types.KindPod {
			continue
		}
		if ch.Object.Namespace == markerNamespace {
			if ch.Op == types.OpAdd {
				bt.markers = append(bt.markers, strings.TrimSuffix(ch.Object.Name, "-"+strings.ToLower(p.opts.NodeName)))
			}
			continue
		}
		key := ch.Object.Namespace + "/" + ch.Object.Name
		op := Op{Pod: key, Op: string(ch.Op), File: ch.File}
		if ch.Op == types.OpUpdate {
			was, now := prev.Pods[key], next.Pods[key]
			op.InPlace = was != nil && now != nil && now.UID != "" && was.UID == now.UID
		}
		bt.ops = append(bt.ops, op)
	}
	return bt
}

func (p *podwatchSide) state() string {
	return fmt.Sprintf("%d snapshots (%d relists), watch up %v (%v), idle %v, markers %v, problems %q",
		p.snaps, p.relists, p.watchUp, p.watchErr, p.idle, sortedNames(p.markers), p.problems)
}
