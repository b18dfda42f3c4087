package gateway

import (
	"net/http"
	"sort"
	"strconv"
	"unicode/utf8"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/secrets"
	"omniroute/backend/translate"

	"github.com/tidwall/gjson"
)

func (g *Gateway) finishLog(req *request) {
	if g.logs == nil {
		return
	}
	l := req.log
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
	if len(timeline) == 0 {
		timeline = nil // no attempt: the column reads null, as it always has
	}
	if len(req.steps) > 0 {
		timeline = append(append([]AttemptRecord{}, req.attempts...), req.steps...)
		sort.SliceStable(timeline, func(i, j int) bool { return timeline[i].StartMs < timeline[j].StartMs })
	}
	// A request refused before any attempt names no connection (nor provider):
	// no connection was tried, so none is charged with the refusal in Logs or
	// in usage by connection. Its reason is the error code and, in the
	// timeline, every exclusion with its own code.
	// The request id (made here, when the request has none yet) and the
	// attempts column are built in a stack buffer (a request's one or two
	// attempts fit), then copied once into one string the row's two fields share.
	var buf [1024]byte
	b := buf[:0]
	if req.id == "" {
		b = secrets.AppendRandomID(b)
	}
	idLen := len(b)
	s := string(appendTimeline(b, timeline))
	l.Attempts = s[idLen:]
	if l.RequestID = req.id; idLen > 0 {
		l.RequestID = s[:idLen]
	}
	if req.cap != nil {
		g.finishCapture(l.RequestID, req)
	}
	l.LatencyMs = msSince(req.start, g.clk.Now())
	if g.spend != nil {
		// An answer was served (a stream from its first bytes on): it is
		// charged, for what was relayed when its usage did not arrive.
		if served := l.Status >= 200 && l.Status < 400; served || req.round.bill.ok && l.Status < 400 {
			if needsRelayedUsage(req) {
				g.chargeRelayed(req)
				l.PromptTokens, l.CompletionTokens = req.log.PromptTokens, req.log.CompletionTokens
			}
			l.CostUSD, l.SavedUSD = g.spend.Charge(l, req.round.bill.model, req.round.bill.usage, req.hold)
		} else if req.hold.Holds() {
			g.spend.Release(l.APIKeyID, req.hold)
		}
	}
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

// appendTimeline appends the request log's attempts column: the JSON array
// encoding/json would make of the records (same keys, order and omitempty),
// written directly instead of through reflection on every request.
func appendTimeline(dst []byte, recs []AttemptRecord) []byte {
	if recs == nil {
		return append(dst, "null"...) // as encoding/json writes a nil slice
	}
	dst = append(dst, '[')
	for i := range recs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendAttempt(dst, &recs[i])
	}
	return append(dst, ']')
}

func appendAttempt(dst []byte, r *AttemptRecord) []byte {
	dst = append(dst, `{"connectionId":`...)
	dst = translate.AppendJSONString(dst, r.ConnectionID)
	dst = append(dst, `,"provider":`...)
	dst = translate.AppendJSONString(dst, r.Provider)
	dst = append(dst, `,"model":`...)
	dst = translate.AppendJSONString(dst, r.Model)
	if r.Status != 0 {
		dst = strconv.AppendInt(append(dst, `,"status":`...), int64(r.Status), 10)
	}
	dst = append(dst, `,"verdict":`...)
	dst = translate.AppendJSONString(dst, r.Verdict)
	if r.Code != "" {
		dst = translate.AppendJSONString(append(dst, `,"code":`...), r.Code)
	}
	if r.Detail != "" {
		dst = translate.AppendJSONString(append(dst, `,"detail":`...), r.Detail)
	}
	dst = strconv.AppendInt(append(dst, `,"startMs":`...), r.StartMs, 10)
	dst = strconv.AppendInt(append(dst, `,"latencyMs":`...), r.LatencyMs, 10)
	if r.RemainingMs != 0 {
		dst = strconv.AppendInt(append(dst, `,"remainingMs":`...), r.RemainingMs, 10)
	}
	if r.ContinuedFromChars != 0 {
		dst = strconv.AppendInt(append(dst, `,"continuedFromChars":`...), int64(r.ContinuedFromChars), 10)
	}
	if r.Splice != "" {
		dst = translate.AppendJSONString(append(dst, `,"splice":`...), r.Splice)
	}
	return append(dst, '}')
}

// LogRefused writes the log row of a client request the edge refused before
// it reached the gateway (the gateway paused): its key, the model its URL or
// body names (the body read under the usual size, time and budget limits;
// none when it cannot be read), the refusal's status and code. The caller
// answers the client; nothing is charged and no connection is named.
func (g *Gateway) LogRefused(w http.ResponseWriter, r *http.Request, client Client, e *errs.Error) {
	if g.logs == nil {
		return
	}
	req := &request{start: g.clk.Now(), client: client}
	defer req.releaseBody()
	req.id, _ = r.Context().Value(requestIDKey{}).(string)
	if model, _, err := geminiTarget(r); err == nil {
		req.model = model
	} else if body, err := g.readBody(w, r, req, g.general()); err == nil {
		req.model = gjson.GetBytes(body, "model").String()
		req.stream = gjson.GetBytes(body, "stream").Bool()
	}
	req.log.Status, req.log.ErrorCode = httpx.Status(e.Class), e.Code
	g.finishLog(req)
}
