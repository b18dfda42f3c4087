package routing

import (
	"fmt"
	"slices"
	"strings"

	"omniroute/backend/errs"
)

// Candidate is one connection that may serve a request, with the upstream model name.
type Candidate struct {
	Conn  *Conn
	Model string
	// ComboIndex is the target's position in its combo (0 outside combos).
	ComboIndex int
}

// Access restricts what a client key may reach; empty lists allow everything.
type Access struct {
	AllowedConnections []string
	AllowedModels      []string
	// Private: the key's requests are never body-captured (not a routing
	// restriction; carried here so the gateway's client stays two words).
	Private bool
}

func (a Access) allowsConn(id string) bool {
	return len(a.AllowedConnections) == 0 || slices.Contains(a.AllowedConnections, id)
}

func (a Access) allowsModel(requested string) bool {
	return len(a.AllowedModels) == 0 || slices.Contains(a.AllowedModels, requested)
}

// Resolve returns the active connections that can serve the requested model, in
// priority order. Naming: "provider/model" (provider id, alias or a user-defined
// endpoint's prefix), or a bare model some connection serves (listed or
// discovered).
func (r *Registry) Resolve(requested string, acc Access) ([]Candidate, error) {
	return r.ResolveInto(nil, requested, acc)
}

// ResolveInto is Resolve appending the candidates to dst[:0] (a caller's
// buffer, so a request that keeps its plan needs no new slice).
func (r *Registry) ResolveInto(dst []Candidate, requested string, acc Access) ([]Candidate, error) {
	requested = strings.TrimSpace(requested)
	if requested == "" {
		return nil, errs.New(errs.Invalid, "MODEL_REQUIRED", "the request must name a model").WithParam("model")
	}
	if !acc.allowsModel(requested) {
		return nil, errs.New(errs.Permission, "MODEL_NOT_ALLOWED", "this API key may not use model %q", requested).WithParam("model")
	}
	all := r.All()
	out := dst[:0]
	if head, rest, ok := strings.Cut(requested, "/"); ok && rest != "" {
		head = strings.ToLower(head)
		// A user-defined endpoint's prefix addresses that endpoint alone.
		for _, c := range all {
			if c.Prefix != "" && c.Prefix == head {
				out = appendUsable(out, c, rest, acc)
			}
		}
		if len(out) > 0 || r.prefixExists(all, head) {
			return out, r.noneLeft(out, requested)
		}
		if p, known := r.catalog.Lookup(head); known {
			for _, c := range all {
				if c.Provider.ID == p.ID {
					out = appendUsable(out, c, rest, acc)
				}
			}
			// A name such as "openai/gpt-4o" may also be a bare model an
			// aggregator (OpenRouter) serves under that very id.
			if len(out) == 0 {
				out = r.servedBare(out, all, requested, acc)
			}
			return out, r.noneLeft(out, requested)
		}
	}
	out = r.servedBare(out[:0], all, requested, acc)
	if len(out) == 0 {
		e := errs.New(errs.NotFound, "MODEL_NOT_FOUND",
			"model %q is not served by any active connection; use provider/model (for example openai/gpt-4o-mini) or list /v1/models", requested).WithParam("model")
		if s := suggest(all, requested); s != "" {
			// A typo is answered with the name it most likely meant, never
			// silently routed to something else.
			e.Message = fmt.Sprintf("model %q is not served by any active connection; did you mean %q? (list /v1/models)", requested, s)
			e.Details = map[string]any{"suggestion": s}
		}
		return nil, e
	}
	return out, nil
}

// servedBare returns the connections serving requested as a bare name.
func (r *Registry) servedBare(out []Candidate, all []*Conn, requested string, acc Access) []Candidate {
	for _, c := range all {
		if c.Serves(requested) {
			out = appendUsable(out, c, requested, acc)
		}
	}
	return out
}

func (r *Registry) prefixExists(all []*Conn, head string) bool {
	for _, c := range all {
		if c.Prefix == head {
			return true
		}
	}
	return false
}

func (r *Registry) noneLeft(out []Candidate, requested string) error {
	if len(out) > 0 {
		return nil
	}
	return errs.New(errs.NotFound, "MODEL_NOT_FOUND",
		"no active connection can serve %q: add or enable a connection for this provider", requested).WithParam("model")
}

func appendUsable(out []Candidate, c *Conn, model string, acc Access) []Candidate {
	if !c.Active || !acc.allowsConn(c.ID) {
		return out
	}
	return append(out, Candidate{Conn: c, Model: model})
}

// suggest is the served model name closest to requested (edit distance at
// most a third of its length, at least 2; case ignored), "" when none is.
func suggest(all []*Conn, requested string) string {
	req := strings.ToLower(BaseModel(requested))
	if req == "" || len(req) > 128 {
		return ""
	}
	best, bestD := "", max(2, len(req)/3)+1
	for _, c := range all {
		if !c.Active {
			continue
		}
		for _, m := range c.Models {
			if d := editDistance(req, strings.ToLower(m), bestD); d < bestD {
				best, bestD = m, d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is at
// least limit (the rows stop early).
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
