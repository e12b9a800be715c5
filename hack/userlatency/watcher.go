package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// line is one line a watcher printed and when this process read it.
type line struct {
	at   time.Time
	text []byte
}

// watcher is a child process whose stdout is read line by line, each line
// timestamped as soon as it is read; matching happens later, off the clock.
type watcher struct {
	name   string
	cmd    *exec.Cmd
	lines  chan line
	exited chan error
	// skipped counts lines that matched nothing waited for.
	skipped int
	// read and last say how far the watcher got, for a failure's message.
	read int
	last []byte
}

func startWatcher(name, path string, args []string, env []string, stderr *os.File) (*watcher, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	w := &watcher{name: name, cmd: cmd, lines: make(chan line, 1<<14), exited: make(chan error, 1)}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			b, err := r.ReadBytes('\n')
			if len(b) > 0 {
				w.lines <- line{at: time.Now(), text: b}
			}
			if err != nil {
				close(w.lines)
				return
			}
		}
	}()
	go func() { w.exited <- cmd.Wait() }()
	return w, nil
}

var errNoLine = errors.New("no matching line")

// wait returns when the watcher printed a line match accepts, skipping
// others, and fails at deadline or when the watcher's stdout ends.
func (w *watcher) wait(deadline time.Time, what string, match func([]byte) bool) (time.Time, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				return time.Time{}, fmt.Errorf("%s: stdout ended before %s (%s): %w", w.name, what, w.progress(), errNoLine)
			}
			w.read++
			w.last = l.text
			if match(l.text) {
				return l.at, nil
			}
			w.skipped++
		case <-timer.C:
			return time.Time{}, fmt.Errorf("%s: %s not printed by the deadline (%s): %w", w.name, what, w.progress(), errNoLine)
		}
	}
}

func (w *watcher) progress() string {
	last := strings.TrimSpace(string(w.last))
	if len(last) > 300 {
		last = last[:300] + "..."
	}
	return fmt.Sprintf("%d lines read, the last: %q", w.read, last)
}

// stop asks the watcher to exit and kills it if it has not within grace.
func (w *watcher) stop(grace time.Duration) {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(grace):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
	for range w.lines {
	}
}
