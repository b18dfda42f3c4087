package gateway

import (
	"net/http"
	"strconv"

	"omniroute/backend/errs"
	"omniroute/backend/resilience/affinity"
	"omniroute/backend/routing"
)

// Lease headers an inference request carries to use its exclusive lease; they
// are read here and never forwarded upstream or logged.
const (
	HeaderLeaseOwner      = "X-OmniRoute-Lease-Owner"
	HeaderLeaseGeneration = "X-OmniRoute-Lease-Generation"
)

// The lease headers in canonical form, read straight from the header map:
// http.Header.Get would canonicalise (and allocate) on every request.
const (
	canonLeaseOwner      = "X-Omniroute-Lease-Owner"
	canonLeaseGeneration = "X-Omniroute-Lease-Generation"
)

// LeaseFence is the exclusive-lease service as the attempt loop uses it.
type LeaseFence interface {
	// Status returns the connection and owner hash of the caller's active lease.
	Status(keyID, ownerToken string, generation int64) (connectionID, ownerHash string, err error)
	// Fence checks owner, generation, key and connection right before dispatch.
	Fence(keyID, ownerToken string, generation int64, connectionID string) error
	// Move hands the lease to another free connection under the same generation.
	Move(keyID, ownerToken string, generation int64, toConnection string) error
}

// Pinner records which connection served a session.
type Pinner interface {
	Served(sessionKey, connectionID, provider string) error
	// Claim decides, right before a session's first attempt on
	// connectionID, which connection holds the session (a team server's
	// database decides: the first writer wins) and returns it; planned is
	// the session's pin the plan was ordered by ("" for none), the only pin
	// a first choice other than it moves the session from. spread is a new
	// session's accounts to choose among by the team's occupancy (the zero
	// Spread for none).
	Claim(sessionKey, connectionID, provider, planned string, spread affinity.Spread) string
	// Shared reports whether the pins are team-wide (Claim asks a database).
	Shared() bool
}

// leaseCtx is a fenced request's lease.
type leaseCtx struct {
	owner        string
	ownerHash    string
	generation   int64
	connectionID string
}

// leaseContext reads the lease headers; a request without them is unmanaged.
func (g *Gateway) leaseContext(r *http.Request, req *request) (*leaseCtx, error) {
	owner, gen := headerValue(r.Header, canonLeaseOwner), headerValue(r.Header, canonLeaseGeneration)
	if owner == "" && gen == "" {
		return nil, nil
	}
	invalid := func(msg string) error {
		e := errs.New(errs.Invalid, "LEASE_CONTEXT_INVALID", "%s", msg)
		e.Type = "lease_error"
		return e
	}
	if owner == "" || gen == "" {
		return nil, invalid("send both X-OmniRoute-Lease-Owner and X-OmniRoute-Lease-Generation, or neither")
	}
	n, err := strconv.ParseInt(gen, 10, 64)
	if err != nil || n < 1 {
		return nil, invalid("X-OmniRoute-Lease-Generation must be a positive integer")
	}
	if g.leases == nil {
		return nil, invalid("exclusive leases are not available")
	}
	conn, hash, err := g.leases.Status(req.client.KeyID, owner, n)
	if err != nil {
		return nil, err
	}
	return &leaseCtx{owner: owner, ownerHash: hash, generation: n, connectionID: conn}, nil
}

// moveLease plans without the lease restriction and moves the lease to the
// first free eligible connection.
func (g *Gateway) moveLease(keyID string, in routing.PlanInput, l *leaseCtx) (routing.Plan, error) {
	in.LeaseConnection = ""
	plan, err := g.engine.Plan(in)
	if err != nil || len(plan.Candidates) == 0 {
		return plan, err
	}
	to := plan.Candidates[0]
	if err := g.leases.Move(keyID, l.owner, l.generation, to.Conn.ID); err != nil {
		return plan, err
	}
	l.connectionID = to.Conn.ID
	plan.Candidates = []routing.Candidate{to}
	return plan, nil
}
