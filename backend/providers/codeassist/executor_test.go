package codeassist_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"omniroute/backend/providers"
	"omniroute/backend/providers/codeassist"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeDoer answers each request with route(path, body).
type fakeDoer struct {
	mu    sync.Mutex
	calls map[string]int
	last  map[string]*http.Request
	body  map[string][]byte
	route func(path string, body []byte) (int, string, string) // status, content type, body
}

func newDoer(route func(path string, body []byte) (int, string, string)) *fakeDoer {
	return &fakeDoer{calls: map[string]int{}, last: map[string]*http.Request{}, body: map[string][]byte{}, route: route}
}

func (d *fakeDoer) Do(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	p := req.URL.Path
	d.mu.Lock()
	d.calls[p]++
	d.last[p], d.body[p] = req, b
	d.mu.Unlock()
	status, ct, out := d.route(p, b)
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(out)), Request: req}, nil
}

func (d *fakeDoer) count(p string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[p]
}

const geminiAnswer = `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}]}`

func target(conn string) *providers.Target {
	return &providers.Target{BaseURL: "https://cloudcode.test", Secret: "ya29.tok", AuthType: "oauth", Model: "gemini-2.5-flash", ConnectionID: conn}
}

func onboarded(path string, body []byte) (int, string, string) {
	switch path {
	case "/v1internal:loadCodeAssist":
		return 200, "application/json", `{"currentTier":{"id":"free-tier"},"cloudaicompanionProject":"proj-1"}`
	case "/v1internal:generateContent":
		return 200, "application/json", `{"response":` + geminiAnswer + `,"traceId":"t"}`
	}
	return 404, "application/json", `{"error":{"code":404,"status":"NOT_FOUND"}}`
}

// TestEnvelopeAndUnwrappedAnswer: the Gemini body goes inside {model,
// project, request} with the bearer token; the answer comes back unwrapped.
func TestEnvelopeAndUnwrappedAnswer(t *testing.T) {
	d := newDoer(onboarded)
	e := codeassist.New(d, "ua")
	resp, err := e.Do(context.Background(), target("c1"), providers.Call{Body: []byte(`{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if string(got) != geminiAnswer || resp.ContentLength != int64(len(geminiAnswer)) {
		t.Fatalf("answer %s (length %d)", got, resp.ContentLength)
	}
	sent := gjson.ParseBytes(d.body["/v1internal:generateContent"])
	if sent.Get("model").String() != "gemini-2.5-flash" || sent.Get("project").String() != "proj-1" ||
		sent.Get("request.contents.0.parts.0.text").String() != "x" || sent.Get("request.model").Exists() {
		t.Fatalf("envelope %s", sent.Raw)
	}
	if h := d.last["/v1internal:generateContent"].Header.Get("Authorization"); h != "Bearer ya29.tok" {
		t.Fatalf("authorization %q", h)
	}
	if got := d.last["/v1internal:loadCodeAssist"].Header.Get("Authorization"); got != "Bearer ya29.tok" {
		t.Fatalf("loadCodeAssist authorization %q", got)
	}
}

// TestStreamUnwrapIsSplitInvariant: however the upstream's SSE bytes are
// cut, the client reads the same events, each data unwrapped; comments go.
func TestStreamUnwrapIsSplitInvariant(t *testing.T) {
	up := ": keep-alive\r\n\r\ndata: {\"response\":{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}}\r\n\r\n" +
		"data: {\"response\":{\"candidates\":[{\"finishReason\":\"STOP\"}]},\"traceId\":\"x\"}\n\n"
	want := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\n\ndata: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\n\n"
	for cut := 1; cut < len(up); cut++ {
		d := newDoer(func(p string, _ []byte) (int, string, string) {
			if p == "/v1internal:streamGenerateContent" {
				return 200, "text/event-stream", ""
			}
			return onboarded(p, nil)
		})
		e := codeassist.New(&splitDoer{d, up, cut}, "ua")
		resp, err := e.Do(context.Background(), target("c"), providers.Call{Body: []byte(`{}`), Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || string(got) != want {
			t.Fatalf("cut %d: %q %v", cut, got, err)
		}
		if q := d.last["/v1internal:streamGenerateContent"].URL.RawQuery; q != "alt=sse" {
			t.Fatalf("query %q", q)
		}
	}
}

// splitDoer serves the stream body in two reads cut at cut.
type splitDoer struct {
	*fakeDoer
	stream string
	cut    int
}

func (s *splitDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := s.fakeDoer.Do(req)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = io.NopCloser(io.MultiReader(strings.NewReader(s.stream[:s.cut]), strings.NewReader(s.stream[s.cut:])))
	}
	return resp, err
}

// TestProjectLookedUpOnceUnderConcurrency: ten requests of a new login ask
// loadCodeAssist once; later requests not at all.
func TestProjectLookedUpOnceUnderConcurrency(t *testing.T) {
	release := make(chan struct{})
	var arrived atomic.Int32
	d := newDoer(func(p string, b []byte) (int, string, string) {
		if p == "/v1internal:loadCodeAssist" {
			arrived.Add(1)
			<-release
		}
		return onboarded(p, b)
	})
	e := codeassist.New(d, "ua")
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := e.Do(context.Background(), target("c"), providers.Call{Body: []byte(`{}`)})
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("%v %v", resp, err)
			}
		}()
	}
	for arrived.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if _, _, err := e.Project(context.Background(), target("c")); err != nil || d.count("/v1internal:loadCodeAssist") != 1 {
		t.Fatalf("loadCodeAssist called %d times (%v)", d.count("/v1internal:loadCodeAssist"), err)
	}
}

// TestOnboardingAndItsEdges: an account without a project is onboarded on
// its default tier, onboardUser asked again while its operation is pending
// (with the poll wait); a project set on the connection is used without a
// lookup; a refused lookup is handed on and not remembered; an onboarding
// that names no project is a 403 that says what to set.
func TestOnboardingAndItsEdges(t *testing.T) {
	pending := 2
	d := newDoer(func(p string, b []byte) (int, string, string) {
		switch p {
		case "/v1internal:loadCodeAssist":
			return 200, "application/json", `{"allowedTiers":[{"id":"standard-tier"},{"id":"free-tier","isDefault":true}]}`
		case "/v1internal:onboardUser":
			if gjson.GetBytes(b, "tierId").String() != "free-tier" || !gjson.GetBytes(b, "metadata").IsObject() {
				return 400, "application/json", `{"error":{"code":400}}`
			}
			if pending > 0 {
				pending--
				return 200, "application/json", `{"name":"op","done":false}`
			}
			return 200, "application/json", `{"name":"op","done":true,"response":{"cloudaicompanionProject":{"id":"onboarded-proj"}}}`
		}
		return onboarded(p, b)
	})
	e := codeassist.New(d, "ua")
	var waits []time.Duration
	e.Sleep = func(_ context.Context, w time.Duration) error { waits = append(waits, w); return nil }
	p, refusal, err := e.Project(context.Background(), target("c"))
	if err != nil || refusal != nil || p != "onboarded-proj" || d.count("/v1internal:onboardUser") != 3 || len(waits) != 2 || waits[0] != e.PollWait {
		t.Fatalf("onboarding: %q %v %v, %d onboardUser calls, waits %v", p, refusal, err, d.count("/v1internal:onboardUser"), waits)
	}

	set := target("c2")
	set.Google.Project = "my-own-proj"
	if p, _, _ := e.Project(context.Background(), set); p != "my-own-proj" || d.count("/v1internal:loadCodeAssist") != 1 {
		t.Fatalf("connection project: %q, %d lookups", p, d.count("/v1internal:loadCodeAssist"))
	}

	refusing := newDoer(func(p string, _ []byte) (int, string, string) {
		return 401, "application/json", `{"error":{"code":401,"status":"UNAUTHENTICATED"}}`
	})
	e2 := codeassist.New(refusing, "ua")
	for i := 1; i <= 2; i++ {
		resp, err := e2.Do(context.Background(), target("c3"), providers.Call{Body: []byte(`{}`)})
		if err != nil || resp.StatusCode != 401 || refusing.count("/v1internal:loadCodeAssist") != i || refusing.count("/v1internal:generateContent") != 0 {
			t.Fatalf("refused lookup %d: %v %v", i, resp, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), "UNAUTHENTICATED") {
			t.Fatalf("refusal body %s", body)
		}
	}

	none := newDoer(func(p string, _ []byte) (int, string, string) {
		if p == "/v1internal:onboardUser" {
			return 200, "application/json", `{"done":true,"response":{}}`
		}
		return 200, "application/json", `{}`
	})
	resp, err := codeassist.New(none, "ua").Do(context.Background(), target("c4"), providers.Call{Body: []byte(`{}`)})
	if err != nil || resp.StatusCode != 403 {
		t.Fatalf("no project: %v %v", resp, err)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "providerSpecificData.projectId") {
		t.Fatalf("no project message: %s", b)
	}
	if got := gjson.GetBytes(none.body["/v1internal:onboardUser"], "tierId").String(); got != "legacy-tier" {
		t.Fatalf("tier without a default: %q", got)
	}
}

// TestModelNames: the model goes in the envelope bare; one that could
// break out of it or the URL is refused before anything is sent.
func TestModelNames(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"gemini-2.5-pro", "gemini-2.5-pro", true},
		{"models/gemini-2.5-pro", "gemini-2.5-pro", true},
		{"", "", false},
		{"a/b", "", false},
		{`x"y`, "", false},
		{"x:y", "", false},
	}
	for _, c := range cases {
		got, err := codeassist.Model(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%q: %q %v", c.in, got, err)
		}
	}
	env := codeassist.Envelope("m", `p"q`, []byte(`{"contents":[]}`))
	if !gjson.ValidBytes(env) || gjson.GetBytes(env, "project").String() != `p"q` {
		t.Fatalf("envelope %s", env)
	}
}
