package metrics

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrListen wraps the failure to bind --metrics-bind-address.
var ErrListen = errors.New("metrics: cannot listen on --metrics-bind-address")

// ErrDisabled is returned by Listen when the bind address is "0".
var ErrDisabled = errors.New("metrics: server disabled (--metrics-bind-address=0)")

const (
	// shutdownTimeout bounds the wait for scrapes in flight when ctx ends;
	// a scrape takes milliseconds, and the agent's flush of pending event
	// writes must not wait on a slow scraper.
	shutdownTimeout = 2 * time.Second
	// readHeaderTimeout and scrapeTimeout keep a stuck client from pinning
	// a connection (and a goroutine) forever.
	readHeaderTimeout = 5 * time.Second
	scrapeTimeout     = 10 * time.Second
	// maxScrapes in flight: one scraper is normal, a handful is plenty.
	maxScrapes = 4
)

// Server serves /metrics, /healthz and /readyz for a Metrics.
type Server struct {
	opts Options
	m    *Metrics
	log  *slog.Logger
	ln   net.Listener
}

// NewServer checks opts and builds a Server. It binds and starts nothing. A
// nil log discards.
func NewServer(opts Options, m *Metrics, log *slog.Logger) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, m: m, log: log}, nil
}

// Listen binds the address now, so a port in use fails the start of the
// agent rather than a goroutine later, and reports the address bound
// (useful with port 0). Run calls it if it was not called.
func (s *Server) Listen() (net.Addr, error) {
	if !s.opts.Enabled() {
		return nil, ErrDisabled
	}
	if s.ln != nil {
		return s.ln.Addr(), nil
	}
	ln, err := net.Listen("tcp", s.opts.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrListen, s.opts.BindAddress, err)
	}
	s.ln = ln
	return ln.Addr(), nil
}

// Handler is the server's mux, for tests and embedding.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", http.TimeoutHandler(s.metricsHandler(), scrapeTimeout, "scrape timed out\n"))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := s.m.Ready()
		code := http.StatusOK
		if !ok {
			code = http.StatusServiceUnavailable
		}
		writeText(w, code, why)
	})
	return mux
}

// metricsContentType is Prometheus's text format, version 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// metricsHandler serves the metrics, at most maxScrapes at once (503
// beyond), gzipped when the scraper accepts it, as Prometheus does.
func (s *Server) metricsHandler() http.Handler {
	slots := make(chan struct{}, maxScrapes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			http.Error(w, fmt.Sprintf("more than %d scrapes in flight", maxScrapes), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", metricsContentType)
		var out io.Writer = w
		if acceptsGzip(r) {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			defer gz.Close()
			out = gz
		}
		if err := s.m.WriteText(out); err != nil {
			s.log.Debug("metrics: scrape not written", "err", err)
		}
	})
}

// acceptsGzip says whether the request's Accept-Encoding names gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if enc, _, _ := strings.Cut(strings.TrimSpace(part), ";"); enc == "gzip" {
			return true
		}
	}
	return false
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, body)
}

// Close releases the listener of a Listen not followed by Run.
func (s *Server) Close() error {
	if s.ln == nil {
		return nil
	}
	return s.ln.Close()
}

// Run serves until ctx is done, then shuts down, letting scrapes in flight
// finish within a short bound. It returns nil after a shutdown caused by
// ctx, or the error that stopped serving. It returns ErrDisabled at once
// when the bind address is "0". Call it once.
func (s *Server) Run(ctx context.Context) error {
	if _, err := s.Listen(); err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      scrapeTimeout + time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.log.Info("serving metrics and health", "addr", s.ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(s.ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("metrics: serving on %s: %w", s.ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		// Cut whatever is still in flight rather than leak it.
		err = errors.Join(fmt.Errorf("metrics: shutdown: %w", err), srv.Close())
	}
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("metrics: serving on %s: %w", s.ln.Addr(), serr))
	}
	return err
}
