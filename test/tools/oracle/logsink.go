package oracle

import (
	"fmt"
	"sync"

	"github.com/go-logr/logr"
)

// The file source reports a rejected manifest only through its logger, so
// the rejection message has to be fished out of the log.
const msgRejected = "Could not process manifest file"

type logEntry struct {
	msg string
	err error
	kv  []any
}

// captureSink keeps error entries; verbosity above 0 is disabled because the
// kubelet's V(5) lines format whole pods and would only slow the fuzzer.
type captureSink struct {
	mu     *sync.Mutex
	errors *[]logEntry
	values []any
}

func newCaptureSink() *captureSink {
	return &captureSink{mu: new(sync.Mutex), errors: new([]logEntry)}
}

func (s *captureSink) Init(logr.RuntimeInfo)    {}
func (s *captureSink) Enabled(level int) bool   { return level == 0 }
func (s *captureSink) Info(int, string, ...any) {}

func (s *captureSink) Error(err error, msg string, kv ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := append(append([]any{}, s.values...), kv...)
	*s.errors = append(*s.errors, logEntry{msg: msg, err: err, kv: all})
}

func (s *captureSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any{}, s.values...), kv...)
	return &c
}

func (s *captureSink) WithName(string) logr.LogSink { return s }

// rejections returns the error logged for each rejected path.
func (s *captureSink) rejections() map[string]error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]error{}
	for _, e := range *s.errors {
		if e.msg != msgRejected {
			continue
		}
		if p, ok := lookup(e.kv, "path"); ok {
			out[p] = e.err
		}
	}
	return out
}

// others returns logged errors that are not manifest rejections: they mean
// the source itself misbehaved and the verdict cannot be trusted.
func (s *captureSink) others() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range *s.errors {
		if e.msg == msgRejected {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %v %v", e.msg, e.err, e.kv))
	}
	return out
}

func lookup(kv []any, key string) (string, bool) {
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok && k == key {
			return fmt.Sprint(kv[i+1]), true
		}
	}
	return "", false
}
