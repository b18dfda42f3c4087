// Package hostile attacks the real built binary from both sides — hostile
// clients and hostile upstreams on loopback — and checks that it stays up,
// answers in the JSON error envelope, keeps memory and file descriptors
// bounded, keeps serving healthy clients, never leaks a connection's secret,
// and refuses to start on a data directory it could damage.
//
// Every test is bounded in time and attack size (scaled to run on two cores
// in about a minute); the sizes are stated beside each test.
package hostile
