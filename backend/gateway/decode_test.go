package gateway

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"omniroute/backend/config"
	"omniroute/backend/errs"
	"omniroute/backend/redact"
	"omniroute/backend/translate"
)

func decodeBody(t *testing.T, format translate.Format, body string) (*request, error) {
	t.Helper()
	gen := config.DefaultGeneral()
	g := &Gateway{general: func() *config.General { return &gen }}
	req := &request{format: format}
	r := httptest.NewRequest(http.MethodPost, "/v1/x", strings.NewReader(body))
	err := g.decode(httptest.NewRecorder(), r, req, &gen)
	req.releaseBody()
	return req, err
}

func TestDecodeRefusesWhatTranslationWould(t *testing.T) {
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	cases := []struct {
		name   string
		format translate.Format
		body   string
		code   string // "" = accepted
	}{
		{"chat ok", translate.Chat, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, ""},
		{"chat tool turn without content", translate.Chat, `{"model":"m","messages":[{"role":"assistant","tool_calls":[]},{"role":"tool","content":null}]}`, ""},
		{"chat content parts", translate.Chat, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`, ""},
		{"messages ok", translate.Messages, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"responses ok", translate.Responses, `{"model":"m","input":"hi"}`, ""},
		{"empty", translate.Chat, ``, "INVALID_JSON"},
		{"array", translate.Chat, `[]`, "INVALID_JSON"},
		{"too deep", translate.Chat, `{"model":"m","messages":[],"x":` + deep + `}`, "JSON_TOO_DEEP"},
		{"invalid UTF-8", translate.Chat, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", "INVALID_JSON"},
		{"model twice", translate.Chat, `{"model":"a","messages":[],"model":"b"}`, "DUPLICATE_FIELD"},
		{"model twice, escaped", translate.Messages, `{"model":"a","messages":[],"m\u006fdel":"b"}`, "DUPLICATE_FIELD"},
		{"model in another case", translate.Chat, `{"model":"a","messages":[],"Model":"b"}`, "DUPLICATE_FIELD"},
		{"model upper-case, escaped", translate.Chat, `{"model":"a","messages":[],"\u004dODEL":"b"}`, "DUPLICATE_FIELD"},
		{"stream in another case", translate.Responses, `{"model":"a","input":"x","stream":false,"Stream":true}`, "DUPLICATE_FIELD"},
		{"model too long", translate.Chat, `{"model":"` + strings.Repeat("x", maxModelLen+1) + `","messages":[]}`, "INVALID_FIELD"},
		{"model at the limit", translate.Chat, `{"model":"` + strings.Repeat("x", maxModelLen) + `","messages":[]}`, ""},
		{"message not an object", translate.Chat, `{"model":"m","messages":["hi"]}`, "INVALID_FIELD"},
		{"role not a string", translate.Chat, `{"model":"m","messages":[{"role":1,"content":"x"}]}`, "INVALID_FIELD"},
		{"content a number", translate.Chat, `{"model":"m","messages":[{"role":"user","content":5}]}`, "INVALID_FIELD"},
		{"content parts not objects", translate.Chat, `{"model":"m","messages":[{"role":"user","content":["x"]}]}`, "INVALID_FIELD"},
		{"messages content missing", translate.Messages, `{"model":"m","messages":[{"role":"user"}]}`, "INVALID_FIELD"},
		{"messages content null", translate.Messages, `{"model":"m","messages":[{"role":"user","content":null}]}`, "INVALID_FIELD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeBody(t, c.format, c.body)
			if c.code == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || errs.As(err).Code != c.code || errs.As(err).Class != errs.Invalid {
				t.Fatalf("err = %v, want %s (400)", err, c.code)
			}
		})
	}
}

// FuzzDecode: any body is accepted or refused with a client error, never a
// panic, and an accepted body is one the translators can read.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `{"model":"m","input":"x"}`,
		`{"model":"a","model":"b"}`, `[[[`, "{\"model\":\"\xff\"}", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`} {
		f.Add([]byte(s), uint8(0))
	}
	formats := []translate.Format{translate.Chat, translate.Messages, translate.Responses}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		format := formats[int(which)%len(formats)]
		req, err := decodeBody(t, format, string(body))
		sameAsGets(t, format, body, req, err)
		if err != nil {
			if e := errs.As(err); e.Class != errs.Invalid && e.Class != errs.TooLarge {
				t.Fatalf("a body got a non-client error: %v", err)
			}
			return
		}
		if req.model == "" || len(req.model) > maxModelLen {
			t.Fatalf("accepted model %q", req.model)
		}
		for _, up := range []translate.Format{translate.Chat, translate.Messages} {
			_, _ = codec{client: format, upstream: up}.request(req.body) // must not panic
		}
	})
}

// decodeByGet is decode's reading of a body that passed checkJSON as it was
// before its one walk: a gjson Get per field, gjson's ForEach over the
// messages. It returns the error code and parameter (or "" when accepted),
// the model and stream.
func decodeByGet(format translate.Format, body []byte) (code, param, model string, stream bool) {
	refuse := func(code, param string) (string, string, string, bool) { return code, param, "", false }
	root := gjson.ParseBytes(body)
	m := root.Get("model")
	if m.Type != gjson.String || m.Str == "" {
		return refuse("MODEL_REQUIRED", "model")
	}
	if len(m.Str) > maxModelLen {
		return refuse("INVALID_FIELD", "model")
	}
	switch format {
	case translate.Chat, translate.Messages:
		msgs := root.Get("messages")
		if !msgs.IsArray() {
			return refuse("MESSAGES_REQUIRED", "messages")
		}
		i := 0
		msgs.ForEach(func(_, m gjson.Result) bool {
			p := "messages[" + itoa(i) + "]"
			i++
			if !m.IsObject() {
				code, param = "INVALID_FIELD", p
				return false
			}
			if role := m.Get("role"); role.Type != gjson.String || role.Str == "" {
				code, param = "INVALID_FIELD", p+".role"
				return false
			}
			c := m.Get("content")
			ok := c.Type == gjson.String || c.IsArray() && func() bool {
				all := true
				c.ForEach(func(_, v gjson.Result) bool { all = v.IsObject(); return all })
				return all
			}()
			if format == translate.Chat {
				ok = ok || !c.Exists() || c.Type == gjson.Null
			}
			if !ok {
				code, param = "INVALID_FIELD", p+".content"
				return false
			}
			return true
		})
		if code != "" {
			return refuse(code, param)
		}
	case translate.Responses:
		in := root.Get("input")
		if in.Type != gjson.String && !in.IsArray() {
			return refuse("INPUT_REQUIRED", "input")
		}
		if root.Get("previous_response_id").Type == gjson.String {
			return refuse("PREVIOUS_RESPONSE_UNSUPPORTED", "previous_response_id")
		}
	}
	if s := root.Get("stream"); s.Exists() && s.Type != gjson.True && s.Type != gjson.False && s.Type != gjson.Null {
		return refuse("INVALID_FIELD", "stream")
	}
	return "", "", m.Str, root.Get("stream").Bool()
}

// sameAsGets fails t unless decode refused or accepted body as decodeByGet
// does, with the same code and parameter, model and stream.
func sameAsGets(t *testing.T, format translate.Format, body []byte, req *request, err error) {
	t.Helper()
	if checkJSON(body) != nil {
		return // refused before any field is read
	}
	code, param, model, stream := decodeByGet(format, body)
	var gotCode, gotParam string
	if err != nil {
		e := errs.As(err)
		gotCode, gotParam = e.Code, e.Param
	}
	if gotCode != code || gotParam != param || err == nil && (req.model != model || req.stream != stream) {
		t.Fatalf("%v %s: decode gives %q %q (model %q, stream %v); a Get per field %q %q (%q, %v)",
			format, body, gotCode, gotParam, req.model, req.stream, code, param, model, stream)
	}
}

// TestDecodeWalkReadsWhatGetsRead: decode's one walk over the top level finds
// the fields wherever they sit, escaped keys included, with the checks in the
// order they had (model, then messages or input, then stream).
func TestDecodeWalkReadsWhatGetsRead(t *testing.T) {
	big := `"pad":"` + strings.Repeat("x", 4096) + `",`
	cases := []struct {
		name   string
		format translate.Format
		body   string
		code   string // "" = accepted
		stream bool
	}{
		{"stream last", translate.Chat, `{"messages":[{"role":"user","content":"hi"}],` + big + `"model":"m","stream":true}`, "", true},
		{"stream first", translate.Chat, `{"stream":true,"model":"m","messages":[]}`, "", true},
		{"stream escaped key", translate.Chat, `{"model":"m","messages":[],"str\u0065am":true}`, "", true},
		{"stream false", translate.Messages, `{"model":"m","stream":false,"messages":[]}`, "", false},
		{"stream null", translate.Chat, `{"model":"m","stream":null,"messages":[]}`, "", false},
		{"stream a string", translate.Chat, `{"model":"m","stream":"yes","messages":[]}`, "INVALID_FIELD", false},
		{"model missing, stream bad", translate.Chat, `{"stream":"yes","messages":[]}`, "MODEL_REQUIRED", false},
		{"model a number", translate.Chat, `{"model":5,"messages":[]}`, "MODEL_REQUIRED", false},
		{"messages missing, stream bad", translate.Chat, `{"model":"m","stream":1}`, "MESSAGES_REQUIRED", false},
		{"nested model is not the model", translate.Chat, `{"x":{"model":"inner"},"messages":[]}`, "MODEL_REQUIRED", false},
		{"responses input and stream", translate.Responses, `{"model":"m",` + big + `"input":[{"role":"user","content":"x"}],"stream":true}`, "", true},
		{"responses input missing", translate.Responses, `{"model":"m","messages":[]}`, "INPUT_REQUIRED", false},
		{"responses previous id", translate.Responses, `{"previous_response_id":"r1","model":"m","input":"x"}`, "PREVIOUS_RESPONSE_UNSUPPORTED", false},
		{"responses previous id null", translate.Responses, `{"previous_response_id":null,"model":"m","input":"x"}`, "", false},
		{"model escaped", translate.Chat, `{"model":"gpt\u002d4o","messages":[]}`, "", false},
		{"message key escaped", translate.Chat, `{"model":"m","messages":[{"r\u006fle":"user","c\u006fntent":5}]}`, "INVALID_FIELD", false},
		{"message role twice: the first counts", translate.Chat, `{"model":"m","messages":[{"role":"","role":"user"}]}`, "INVALID_FIELD", false},
		{"message content twice: the first counts", translate.Messages, `{"model":"m","messages":[{"role":"user","content":"x","content":5}]}`, "", false},
		{"content parts, one not an object", translate.Messages, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"},"y"]}]}`, "INVALID_FIELD", false},
		{"content with long escaped text", translate.Chat, `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat(`a\"b\\`, 300) + `"}],"stream":true}`, "", true},
		{"second message bad", translate.Chat, `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"user","content":{}}]}`, "INVALID_FIELD", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := decodeBody(t, c.format, c.body)
			sameAsGets(t, c.format, []byte(c.body), req, err)
			if c.code != "" {
				if err == nil || errs.As(err).Code != c.code {
					t.Fatalf("err = %v, want %s", err, c.code)
				}
				return
			}
			if err != nil || req.stream != c.stream {
				t.Fatalf("refused (%v) or stream %v, want %v", err, req.stream, c.stream)
			}
		})
	}
}

func TestRedactSecret(t *testing.T) {
	cases := []struct{ in, secret, want string }{
		{"bad key zq7-CANARY-x here", "zq7-CANARY-x", "bad key [redacted] here"},
		{"twice k3y/+=x and k3y%2F%2B%3Dx", "k3y/+=x", "twice [redacted] and [redacted]"},
		{"no secret here", "zq7-CANARY-x", "no secret here"},
		{"abc short", "abc", "abc short"}, // under redact.MinSecretLen: left alone
		{"", "zq7-CANARY-x", ""},
	}
	for _, c := range cases {
		if got := redact.Known(c.in, []string{c.secret}); got != c.want {
			t.Errorf("redactSecret(%q, %q) = %q, want %q", c.in, c.secret, got, c.want)
		}
	}
}

// TestClientSecrets: the client's key is known by value from every place a
// client sends it, so an upstream echoing it is redacted whole.
func TestClientSecrets(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/v1beta/models/m:generateContent?alt=sse&key=k-query-1", nil)
	r.Header.Set("Authorization", "Bearer k-bearer-1")
	r.Header.Set("X-Api-Key", "k-xapi-1")
	r.Header.Set("X-Goog-Api-Key", "k-goog-1")
	got := clientSecrets(r)
	for _, want := range []string{"k-bearer-1", "k-xapi-1", "k-goog-1", "k-query-1"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q missing from %v", want, got)
		}
	}
	msg := redact.All("echo: Bearer k-bearer-1 and k-goog-1", got)
	if strings.Contains(msg, "k-bearer-1") || strings.Contains(msg, "k-goog-1") {
		t.Errorf("client key survived: %s", msg)
	}
}

// TestWithoutModel: a Gemini body loses its top-level model in any spelling
// a JSON reader matches; nested "model" members and the rest stay.
func TestWithoutModel(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"x","contents":[]}`:                          `{"contents":[]}`,
		`{"contents":[], "mod\u0065l" : "x"}`:                  `{"contents":[]}`,
		`{"MODEL":"x","a":{"model":"keep"},"b":1}`:             `{"a":{"model":"keep"},"b":1}`,
		`{"contents":[{"parts":[{"text":"model"}]}]}`:          `{"contents":[{"parts":[{"text":"model"}]}]}`,
		`{"model":{"nested":true},"generationConfig":{"t":1}}`: `{"generationConfig":{"t":1}}`,
	} {
		if got := string(withoutModel([]byte(in))); got != want {
			t.Errorf("withoutModel(%s) = %s, want %s", in, got, want)
		}
	}
}
