package gateway

import (
	"database/sql"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/pricing"
	"omniroute/backend/providers"
	"omniroute/backend/routing"
	"omniroute/backend/store"
	"omniroute/backend/translate"
)

// recordSpend is a Spend that records what it was asked to charge.
type recordSpend struct {
	charged  []pricing.Usage
	models   []string
	released int
}

func (*recordSpend) Admit(string, string, []byte) (Hold, error) { return Hold{}, nil }

func (s *recordSpend) Charge(_ store.RequestLog, model string, u pricing.Usage, _ Hold) (sql.NullFloat64, float64) {
	s.charged, s.models = append(s.charged, u), append(s.models, model)
	return sql.NullFloat64{Float64: 1, Valid: true}, 0
}

func (s *recordSpend) Release(string, Hold) { s.released++ }

// TestUsageCountsAreClamped: every usage count an upstream reports is read
// within 0 … 10⁹, each before counts are added: a negative count gives no
// budget back, int64's largest neither wraps a sum nor a spend.
func TestUsageCountsAreClamped(t *testing.T) {
	const most = maxUsageTokens
	for _, c := range []struct {
		name, usage string
		want        pricing.Usage
	}{
		{"negative", `{"prompt_tokens":-1000000,"completion_tokens":-5,"prompt_tokens_details":{"cached_tokens":-4}}`, pricing.Usage{}},
		{"int64 max in both spellings", `{"prompt_tokens":9223372036854775807,"input_tokens":9223372036854775807,"completion_tokens":9223372036854775807,"output_tokens":1}`,
			pricing.Usage{Prompt: most, Output: most}},
		{"huge floats", `{"prompt_tokens":1e300,"completion_tokens":-1e300}`, pricing.Usage{Prompt: most}},
		{"anthropic cache counts", `{"input_tokens":9223372036854775807,"cache_creation_input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807,"output_tokens":3}`,
			pricing.Usage{Prompt: most, Output: 3, CacheRead: most, CacheWrite: most}},
		{"reasoning", `{"completion_tokens":10,"completion_tokens_details":{"reasoning_tokens":9223372036854775807},"output_tokens_details":{"reasoning_tokens":9223372036854775807}}`,
			pricing.Usage{Output: 10, Reasoning: most}},
	} {
		if got := billUsage(readUsageBill(gjson.Parse(c.usage))); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// A translator's usage (Anthropic, Gemini, Responses, Bedrock, Ollama
	// streams) is clamped as it is read.
	got := usageOf(translate.Usage{InputTokens: math.MaxInt, OutputTokens: -7, CacheReadTokens: math.MinInt,
		CacheWriteTokens: 2e9, ReasoningTokens: 5})
	if want := (pricing.Usage{Prompt: most, CacheWrite: most, Reasoning: 5}); got != want {
		t.Errorf("translator usage: %+v, want %+v", got, want)
	}
	// A JSON answer's Gemini and Ollama counts.
	g := benchGateway()
	g.spend = &recordSpend{}
	cand := routing.Candidate{Conn: &routing.Conn{ID: "c1", BreakerKey: "gemini"}, Model: "m"}
	for _, c := range []struct {
		format translate.Format
		body   string
	}{
		{translate.Gemini, `{"usageMetadata":{"promptTokenCount":-50,"candidatesTokenCount":9223372036854775807,"thoughtsTokenCount":9223372036854775807}}`},
		{translate.OllamaChat, `{"prompt_eval_count":-50,"eval_count":9223372036854775807}`},
	} {
		req := &request{format: c.format}
		g.served(req, cand, http.StatusOK, c.body, gjson.Get(c.body, "usage"))
		if req.log.PromptTokens != 0 || req.log.CompletionTokens != most || req.round.bill.usage.Output != most {
			t.Errorf("%s: log %d/%d, bill %+v", c.format, req.log.PromptTokens, req.log.CompletionTokens, req.round.bill.usage)
		}
	}
}

// TestRelayedAnswersAreCharged: an answer whose usage never arrived (none
// sent, or a stream cut before its end by the client or the upstream) is
// charged what was relayed: its prompt counted from the request, its output
// from the text the client was sent; an answer with its usage is charged
// that; nothing served is charged nothing.
func TestRelayedAnswersAreCharged(t *testing.T) {
	messages := []byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("word ", 80) + `"}]}`)
	chat := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 80) + `"},` +
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("A", 40000) + `"}}]}]}`)
	for _, c := range []struct {
		name       string
		format     translate.Format
		body       []byte
		status     int
		bill       bill
		relayed    int
		want       pricing.Usage
		logIn      int
		logOut     int
		notCharged bool
	}{
		// chatBody's string values: its model name, "user" and "Say hello." (43 bytes).
		{name: "a stream that sent no usage", format: translate.Chat, body: chatBody, status: 200, relayed: 400,
			want: pricing.Usage{Prompt: 11, Output: 100}, logIn: 11, logOut: 100},
		{name: "a Messages stream cut by its client", format: translate.Messages, body: messages, status: 200, relayed: 401,
			bill: bill{model: "m", ok: true, cut: true, usage: pricing.Usage{Prompt: 90, Output: 3}},
			want: pricing.Usage{Prompt: 90, Output: 101}, logIn: 90, logOut: 101},
		// The Messages counter: 400 characters, one message, the framing.
		// Its own output count stands (not the text's 1000).
		{name: "a Messages answer with no prompt count", format: translate.Messages, body: messages, status: 200, relayed: 4000,
			bill: bill{model: "m", ok: true, usage: pricing.Usage{Output: 3}},
			want: pricing.Usage{Prompt: 107, Output: 3}, logIn: 107, logOut: 3},
		{name: "a chat request's inline image counts as one medium", format: translate.Chat, body: chat, status: 200, relayed: 4,
			want: pricing.Usage{Prompt: 105 + 1600, Output: 1}, logIn: 1705, logOut: 1},
		{name: "an answer with its usage", format: translate.Chat, body: chatBody, status: 200, relayed: 4000,
			bill: bill{model: "m", ok: true, usage: pricing.Usage{Prompt: 7, Output: 2}},
			want: pricing.Usage{Prompt: 7, Output: 2}, logIn: 7, logOut: 2},
		{name: "the client left before the first byte", format: translate.Chat, body: chatBody, status: 0, relayed: 400, notCharged: true},
		{name: "refused", format: translate.Chat, body: chatBody, status: 429, notCharged: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := benchGateway()
			sp := &recordSpend{}
			g.spend = sp
			var rows []store.RequestLog
			g.logs = sinkFunc(func(l store.RequestLog) { rows = append(rows, l) })
			g.clk = fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			req := &request{format: c.format, body: c.body, model: "m", relayed: c.relayed,
				hold: Hold{Held: true}}
			req.round.bill = c.bill
			req.log.Status = c.status
			req.log.PromptTokens, req.log.CompletionTokens = c.bill.usage.Prompt, c.bill.usage.Output
			req.attempts = append(req.firstAttempts[:0], AttemptRecord{ConnectionID: "c1", Model: "upstream-m", Status: 200})
			g.finishLog(req)
			if len(rows) != 1 {
				t.Fatalf("%d rows", len(rows))
			}
			if c.notCharged {
				if len(sp.charged) != 0 || sp.released != 1 {
					t.Fatalf("charged %+v, released %d: want the hold released", sp.charged, sp.released)
				}
				return
			}
			if len(sp.charged) != 1 || sp.charged[0] != c.want {
				t.Fatalf("charged %+v, want %+v", sp.charged, c.want)
			}
			if !c.bill.ok && sp.models[0] != "upstream-m" {
				t.Errorf("priced as %q, want the attempt's upstream model", sp.models[0])
			}
			if r := rows[0]; r.PromptTokens != c.logIn || r.CompletionTokens != c.logOut || !r.CostUSD.Valid {
				t.Errorf("row tokens %d/%d cost %v, want %d/%d priced", r.PromptTokens, r.CompletionTokens, r.CostUSD, c.logIn, c.logOut)
			}
		})
	}
}

// TestJSONAnswerWithoutUsageIsChargedItsText: a JSON answer that reports no
// usage is charged the text it carried (its string values, not its keys).
func TestJSONAnswerWithoutUsageIsChargedItsText(t *testing.T) {
	g := benchGateway()
	g.spend = &recordSpend{}
	cand := routing.Candidate{Conn: &routing.Conn{ID: "c1", BreakerKey: "openai-compatible",
		Provider: providers.Provider{ID: "openai-compatible", Format: providers.FormatOpenAI}}, Model: "m"}
	text := strings.Repeat("abcd", 100)
	req := &request{format: translate.Chat}
	g.served(req, cand, http.StatusOK, `{"choices":[{"message":{"role":"assistant","content":"`+text+`"}}]}`, gjson.Result{})
	if want := len(text) + len("assistant"); req.relayed != want {
		t.Fatalf("relayed %d bytes, want %d", req.relayed, want)
	}
	with := &request{format: translate.Chat}
	answer := `{"choices":[{"message":{"content":"` + text + `"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`
	g.served(with, cand, http.StatusOK, answer, gjson.Get(answer, "usage"))
	if with.relayed != 0 {
		t.Fatalf("an answer with its usage: relayed %d, want 0 (not walked)", with.relayed)
	}
}

// TestTextBytes: string values count, member names and data: URLs do not
// (those are media), escapes as written, a cut document ends the walk.
func TestTextBytes(t *testing.T) {
	for _, c := range []struct {
		in          string
		text, media int
	}{
		{`{"a":"xyz","b":["12",3,"4"]}`, 6, 0},
		{`{"k" : "v\"w"}`, 4, 0},
		{`{"img":"data:image/png;base64,AAAA","t":"hi"}`, 2, 1},
		{`{"a":"unterminated`, 12, 0},
		{``, 0, 0},
	} {
		if text, media := textBytes(c.in); text != c.text || media != c.media {
			t.Errorf("%s: %d, %d; want %d, %d", c.in, text, media, c.text, c.media)
		}
	}
}
