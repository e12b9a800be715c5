// Package eventlist prints the Events of podwatch's local store as kubectl
// get events does (a wide table, or a v1 List of Events as JSON): podwatch
// events is this package behind its flags.
package eventlist
