package diff

import "time"

// A shadowed file's UPDATE says the kubelet's next relist goes back to
// the winner, a second restart, and podwatch says that return when it
// takes the relist in. It takes a relist in a moment after seeing it, to
// let the kubelet's sync loop act first: a change whose events come in
// that moment (emacs's save, just after a relist) is said before the
// relist's return, which the kubelet made first. Until podwatch takes in
// a relist, the view keeps, per key, the return a shadowed UPDATE owes
// (returnOwed), and a change said while a relist may have come and gone
// unseen counts that return among the restarts on its way.

// relistEarly is how much earlier than a period after the last relist
// podwatch saw the next may show: the kubelet lists on a ticker, and the
// relist detector dates a list by its first open, within its window.
const relistEarly = 100 * time.Millisecond

// owedReturn is a shadowed file's run the kubelet's next relist ends: the
// file the watch runs the pod from, and the winner the relist goes back
// to.
type owedReturn struct {
	file, winner string
}

// oweReturn records that the kubelet runs key's pod from the shadowed
// file until its next relist, which goes back to winner.
func (v *kubeletView) oweReturn(key, file, winner string) {
	if v.returnOwed == nil {
		v.returnOwed = map[string]owedReturn{}
	}
	v.returnOwed[key] = owedReturn{file: file, winner: winner}
}

// owedReturnBefore names the winner a relist of the kubelet's may have
// gone back to before this step's change to key, unseen as yet: "" when
// no shadowed file's run is owed its return, when the watch still runs
// the pod from that file (its write again: the relist's return is said
// when taken in, see wentback.go), or when the kubelet's next relist is
// not due yet.
func (c *computation) owedReturnBefore(key string) string {
	r, ok := c.kv.returnOwed[key]
	if !ok || c.kv.store[key] == r.file {
		return ""
	}
	if v := c.kv; !v.relist.IsZero() && v.period > 0 && c.snapTime().Before(v.relist.Add(v.period-relistEarly)) {
		return ""
	}
	return r.winner
}
