package metrics

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestDisabledServesNothing(t *testing.T) {
	srv, err := NewServer(Options{BindAddress: Disabled}, New("dev", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Listen(); !errors.Is(err, ErrDisabled) {
		t.Errorf("Listen = %v, want ErrDisabled", err)
	}
	if err := srv.Run(context.Background()); !errors.Is(err, ErrDisabled) {
		t.Errorf("Run = %v, want ErrDisabled at once", err)
	}
}

func TestBindFailureIsClear(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	srv, err := NewServer(Options{BindAddress: addr}, New("dev", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = srv.Listen()
	if !errors.Is(err, ErrListen) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Listen on a busy port = %v, want ErrListen naming %s and the cause", err, addr)
	}
	if err := srv.Run(context.Background()); !errors.Is(err, ErrListen) {
		t.Errorf("Run on a busy port = %v, want ErrListen", err)
	}
}

func TestListenThenCloseWithoutRun(t *testing.T) {
	srv, err := NewServer(Options{BindAddress: "127.0.0.1:0"}, New("dev", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := srv.Listen(); err != nil || again.String() != addr.String() {
		t.Errorf("second Listen = %v %v, want the same address", again, err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestOptions(t *testing.T) {
	if DefaultBindAddress != net.JoinHostPort("127.0.0.1", "10288") || DefaultPort != 10288 {
		t.Errorf("DefaultBindAddress %q and DefaultPort %d disagree", DefaultBindAddress, DefaultPort)
	}
	if DefaultOptions().BindAddress != DefaultBindAddress {
		t.Errorf("DefaultOptions = %+v", DefaultOptions())
	}
	for addr, ok := range map[string]bool{
		"0": true, "127.0.0.1:10288": true, ":10288": true, "[::1]:10288": true, "127.0.0.1:0": true,
		"": false, "127.0.0.1": false, "127.0.0.1:http": false, "127.0.0.1:70000": false, "10288": false,
	} {
		err := Options{BindAddress: addr}.Validate()
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrBindAddress)) {
			t.Errorf("Validate(%q) = %v, want ok=%v", addr, err, ok)
		}
		if _, err := NewServer(Options{BindAddress: addr}, New("dev", nil), nil); (err == nil) != ok {
			t.Errorf("NewServer(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
	if (Options{BindAddress: Disabled}).Enabled() || !DefaultOptions().Enabled() {
		t.Error("Enabled is wrong")
	}
}
