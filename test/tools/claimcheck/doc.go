// Package claimcheck decides whether what a kubelet did to one static pod,
// as its sequence of ADD, UPDATE and REMOVE, falls inside what podwatch
// claimed of it (pkg/types.Claim), change by change.
//
// A restart is one UPDATE or one REMOVE and ADD pair: both sides are
// compared in a normal form in which every REMOVE directly followed by an
// ADD is one UPDATE, so that a kubelet that sent the drop and the start in
// two updates and one that sent one UPDATE are judged alike.
//
// It reads the kubelet's operations exactly as given, with none of the
// allowances a judge of the real kubelet's sync loop needs for lines read
// from a log (test/tools/kubelet): it is meant for a kubelet whose updates
// are seen one by one, in process.
package claimcheck
