package gateway

import (
	"omniroute/backend/pricing"
	"omniroute/backend/translate"
	tanthropic "omniroute/backend/translate/anthropic"
	tgemini "omniroute/backend/translate/gemini"

	"github.com/tidwall/gjson"
)

// maxUsageTokens bounds each token count an upstream reports: a hostile or
// broken upstream's negative count never gives a key budget back, nor does
// a huge one wrap its spend negative.
const maxUsageTokens = 1_000_000_000

// clampTokens is n within 0 … maxUsageTokens.
func clampTokens(n int64) int { return int(min(max(n, 0), maxUsageTokens)) }

// tokensOf is one usage field as reported, clamped.
func tokensOf(r gjson.Result) int { return clampTokens(r.Int()) }

// sumTokens is two clamped counts added, clamped (never wraps).
func sumTokens(a, b int) int { return clampTokens(int64(a) + int64(b)) }

// clampUsage bounds every field of a usage (a translator's, which sums what
// the upstream reported) to 0 … maxUsageTokens.
func clampUsage(u pricing.Usage) pricing.Usage {
	return pricing.Usage{Prompt: clampTokens(int64(u.Prompt)), Output: clampTokens(int64(u.Output)),
		CacheRead: clampTokens(int64(u.CacheRead)), CacheWrite: clampTokens(int64(u.CacheWrite)),
		Reasoning: clampTokens(int64(u.Reasoning))}
}

// Local estimates: one token per four bytes of text (the local counters'
// rule, translate/anthropic.CountTokens), an image or other media at the
// Anthropic counter's 1600.
const (
	bytesPerToken  = 4
	tokensPerMedia = 1600
)

// needsRelayedUsage reports an answer whose usage did not (all) arrive: no
// usage at all, a stream cut before its end (the client left, or the
// upstream broke after the first bytes), no prompt count, or text relayed
// with no output count. Cheap: the normal answer has both counts.
func needsRelayedUsage(req *request) bool {
	b := &req.round.bill
	return !b.ok || b.cut || b.usage.Prompt <= 0 || (b.usage.Output <= 0 && req.relayed > 0)
}

// chargeRelayed fills what the upstream's usage left out with what was
// relayed, so an answer is never charged 0 because its usage never came:
// the prompt estimated from the request (the local counter of its format),
// the output from the text relayed to the client (for a cut stream, the
// larger of that and the output the upstream had counted so far). The log
// row shows the counts charged.
//
//go:noinline
func (g *Gateway) chargeRelayed(req *request) {
	b := &req.round.bill
	if !b.ok {
		b.ok = true
		if n := len(req.attempts); n > 0 {
			b.model = req.attempts[n-1].Model
		}
	}
	u := &b.usage
	if u.Prompt <= 0 {
		u.Prompt = promptEstimate(req.format, req.body)
	}
	if out := (req.relayed + bytesPerToken - 1) / bytesPerToken; out > u.Output && (b.cut || u.Output <= 0) {
		u.Output = clampTokens(int64(out)) // a complete answer's own output count stands
	}
	if req.log.PromptTokens <= 0 {
		req.log.PromptTokens = u.Prompt
	}
	req.log.CompletionTokens = max(req.log.CompletionTokens, u.Output)
}

// promptEstimate is a local count of a request's prompt tokens: the
// Messages and Gemini counters for their bodies, else one token per four
// bytes of the body's string values (keys and JSON framing left out), a
// data: URL (an inline image or file) counted as one medium.
func promptEstimate(f translate.Format, body []byte) int {
	n := 0
	switch f {
	case translate.Messages:
		n, _ = tanthropic.CountTokens(body)
	case translate.Gemini:
		n, _ = tgemini.CountTokens(body)
	}
	if n <= 0 {
		text, media := textBytes(view(body))
		n = (text+bytesPerToken-1)/bytesPerToken + media*tokensPerMedia
	}
	return clampTokens(int64(n))
}

// answerTextBytes is the text of a JSON answer that reported no usage: the
// bytes of its string values (ids, roles and finish reasons included, a few
// tokens over), keys and framing left out.
func answerTextBytes(body string) int {
	n, _ := textBytes(body)
	return n
}

// textBytes walks JSON once (no recursion, no allocation) and counts the
// bytes of its string values, not of its member names; media is the number
// of values that are data: URLs (inline images and files), whose bytes are
// not counted. Escapes count as the bytes written.
func textBytes(data string) (text, media int) {
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		start := i + 1
		j := start
		for j < len(data) && data[j] != '"' {
			if data[j] == '\\' {
				j++
			}
			j++
		}
		end := min(j, len(data))
		// A member name is followed by a colon.
		k := end + 1
		for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r') {
			k++
		}
		switch {
		case k < len(data) && data[k] == ':':
		case end-start > 5 && data[start:start+5] == "data:":
			media++
		default:
			text += end - start
		}
		i = end
	}
	return text, media
}
