package gateway

import (
	"encoding/json"
	"sort"
	"unicode/utf8"
)

func (g *Gateway) finishLog(req *request) {
	if g.logs == nil {
		return
	}
	l := req.log
	l.RequestID = req.id
	l.CreatedAt = req.start.UnixMilli()
	l.APIKeyID = req.client.KeyID
	l.ClientFormat = string(req.format)
	l.Model = capLogString(req.model)
	l.Stream = req.stream
	l.AttemptCount = len(req.attempts)
	if l.ConnectionID == "" && len(req.attempts) > 0 {
		// A failed request names the connection of its last attempt.
		last := req.attempts[len(req.attempts)-1]
		l.ConnectionID, l.Provider = last.ConnectionID, last.Provider
	}
	timeline := req.attempts
	if len(req.steps) > 0 {
		timeline = append(append([]AttemptRecord{}, req.attempts...), req.steps...)
		sort.SliceStable(timeline, func(i, j int) bool { return timeline[i].StartMs < timeline[j].StartMs })
	}
	if l.ConnectionID == "" && len(req.attempts) == 0 {
		// A refused request names the first target routing excluded.
		for _, st := range req.steps {
			if st.Verdict == "excluded" {
				l.ConnectionID, l.Provider = st.ConnectionID, st.Provider
				break
			}
		}
	}
	if b, err := json.Marshal(timeline); err == nil {
		l.Attempts = string(b)
	}
	l.LatencyMs = msSince(req.start, g.clk.Now())
	g.logs.Log(l)
}

// maxLogString bounds a client-supplied string stored in the request log.
const maxLogString = 256

// capLogString cuts s to maxLogString bytes on a rune boundary.
func capLogString(s string) string {
	if len(s) <= maxLogString {
		return s
	}
	cut := maxLogString
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
