package diff

import (
	"testing"

	"github.com/podwatch/podwatch/pkg/types"
)

// A relist podwatch did not see, taking back the pod the kubelet ran
// before a watch event gave it another file, is dated by podwatch's own
// relist, which may come long after the kubelet's: its UPDATE carries the
// window the kubelet acted in, from the watch event (Since), with when the
// kubelet began to run the pod it takes back (Ran).
func TestKubeletTakeBackWindow(t *testing.T) {
	web, bak := valid("", pod("web", "img:1"), t0), valid("", pod("web", "img:bak"), t0)
	s := newStepper(t)
	s.step(true, map[string]*types.File{"web.yaml": &web})
	if got := podOps(s.step(false, map[string]*types.File{"web.yaml.bak": &bak})); got != "UPDATE web.yaml.bak" {
		t.Fatalf("the .bak written: %q", got)
	}
	ran := s.now
	if got := podOps(s.step(true, nil)); got != "" {
		t.Fatalf("a relist with the .bak winning: %q", got)
	}
	chs := s.chmod("web.yaml")
	since := s.now
	if got := podOps(chs); got != "UPDATE web.yaml" || !podChange(chs).Back.IsZero() {
		t.Fatalf("the chmod: %q, window %+v, want an UPDATE on the watch path, with none", got, podChange(chs).Back)
	}
	chs = s.step(true, nil)
	if got := podOps(chs); got != "UPDATE web.yaml.bak" {
		t.Fatalf("the relist: %q", got)
	}
	if ch := podChange(chs); !ch.Back.Since.Equal(since) || !ch.Back.Ran.Equal(ran) || !ch.At.Equal(s.now) {
		t.Fatalf("the relist's UPDATE: at %v, window %+v; want at %v, since %v, ran %v", ch.At, ch.Back, s.now, since, ran)
	}
}

// No window where podwatch cannot bound the kubelet's act: a relist it saw
// dates the change exactly; after two watch events before the relist it
// is not one pod the relist takes back. A pod first run at a relist
// podwatch did not see began at a time it does not know: a window with no
// Ran.
func TestKubeletTakeBackWindowOnlyWhenBounded(t *testing.T) {
	web, bak, tilde := valid("", pod("web", "img:1"), t0), valid("", pod("web", "img:bak"), t0), valid("", pod("web", "img:2"), t0)
	setup := func(t *testing.T) *stepper {
		s := newStepper(t)
		s.step(true, map[string]*types.File{"web.yaml": &web, "#web.yaml#": &tilde})
		s.step(false, map[string]*types.File{"web.yaml.bak": &bak})
		s.step(true, nil)
		return s
	}
	relistBack := func(t *testing.T, s *stepper) types.Change {
		t.Helper()
		chs := s.step(true, nil)
		if got := podOps(chs); got != "UPDATE web.yaml.bak" {
			t.Fatalf("the relist: %q", got)
		}
		return podChange(chs)
	}
	t.Run("seen relist", func(t *testing.T) {
		s := setup(t)
		s.chmod("web.yaml")
		s.seen = true
		if ch := relistBack(t, s); !ch.Back.IsZero() || !ch.At.Equal(s.now) {
			t.Fatalf("at %v, window %+v; want at the relist, no window", ch.At, ch.Back)
		}
	})
	t.Run("two watch events", func(t *testing.T) {
		s := setup(t)
		s.chmod("web.yaml")
		s.chmod("#web.yaml#")
		if ch := relistBack(t, s); !ch.Back.IsZero() {
			t.Fatalf("window %+v, want none", ch.Back)
		}
	})
	t.Run("first run at an unseen relist", func(t *testing.T) {
		s := newStepper(t)
		s.step(true, map[string]*types.File{"web.yaml": &web, "web.yaml.bak": &bak})
		s.chmod("web.yaml")
		since := s.now
		if ch := relistBack(t, s); !ch.Back.Since.Equal(since) || !ch.Back.Ran.IsZero() {
			t.Fatalf("window %+v, want one since the chmod, %v, with no time the pod began", ch.Back, since)
		}
	})
}

// podChange is the one pod change of chs.
func podChange(chs []types.Change) types.Change {
	for _, ch := range chs {
		if ch.Op != "" {
			return ch
		}
	}
	return types.Change{}
}

// A chmod of the shadowed file changes no content, but the kubelet runs
// its pod from then on: the UPDATE is dated by the chmod's watch event,
// not by when the content was first seen, long before.
func TestKubeletWatchUpdateDatedByItsEvent(t *testing.T) {
	web, bak := valid("", pod("web", "img:1"), t0), valid("", pod("web", "img:bak"), t0)
	s := newStepper(t)
	s.step(true, map[string]*types.File{"web.yaml": &web})
	written := s.now
	s.step(false, map[string]*types.File{"web.yaml.bak": &bak})
	s.step(true, nil)
	chs := s.chmod("web.yaml")
	if ch := podChange(chs); ch.Op != types.OpUpdate || !ch.At.Equal(s.now) || s.now.Equal(written) {
		t.Fatalf("the chmod's UPDATE: %+v, want it dated %v, not %v", ch, s.now, written)
	}
}
