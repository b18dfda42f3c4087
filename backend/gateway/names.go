package gateway

import (
	"strings"
	"sync"
)

// modelNames interns the model names clients ask for: a request's model is
// copied out of its body (the request log keeps it after the request and
// must not keep the whole body alive with it), and a name seen before is the
// same copy, so the common request allocates none (docs/BENCHMARKS.md,
// issue 19). The zero value is ready; it is safe for concurrent use.
type modelNames struct {
	mu sync.RWMutex
	m  map[string]string
}

// maxModelNames bounds the table (a client may send any name, up to
// maxModelLen bytes); past it the table starts over.
const maxModelNames = 1024

// intern returns name, a view that may not be kept, as a string of its own:
// the table's copy when it has one.
func (n *modelNames) intern(name string) string {
	n.mu.RLock()
	s, ok := n.m[name]
	n.mu.RUnlock()
	if ok {
		return s
	}
	s = strings.Clone(name)
	n.mu.Lock()
	if n.m == nil || len(n.m) >= maxModelNames {
		n.m = make(map[string]string)
	}
	n.m[s] = s
	n.mu.Unlock()
	return s
}
