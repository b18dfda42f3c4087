package discovery_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/providers/registry"
	"omniroute/tests/fakeupstream"
)

func fake(t *testing.T) (*fakeupstream.Upstream, string) {
	t.Helper()
	up := fakeupstream.New()
	base := up.Start()
	t.Cleanup(up.Close)
	return up, base + "/v1"
}

var (
	openaiCompat = providers.Provider{ID: "openai-compatible", Format: providers.FormatOpenAI, UserDefined: true}
	anthCompat   = providers.Provider{ID: "anthropic-compatible", Format: providers.FormatAnthropic, UserDefined: true}
	glm          = providers.Provider{ID: "glm", Format: providers.FormatOpenAI, DefaultModels: []string{"glm-4.6", "glm-4.5"}}
)

func client() *discovery.Client {
	return &discovery.Client{HTTP: &http.Client{Timeout: 5 * time.Second}, UserAgent: "OmniRoute/test"}
}

func TestListBothShapes(t *testing.T) {
	up, base := fake(t)
	models := []string{"m-1", "m-2", "models/m-3", "has space", "m-4", "m-5", "m-1"}
	up.SetModels(models)
	want := []string{"m-1", "m-2", "m-3", "m-4", "m-5"}
	cases := []struct {
		name     string
		provider providers.Provider
		auth     string
		pageSize int
		header   string // request header that must carry the key
		value    string
	}{
		{"openai bearer", openaiCompat, "apikey", 0, "Authorization", "Bearer key-o"},
		{"anthropic x-api-key one page", anthCompat, "apikey", 0, "X-Api-Key", "key-a1"},
		{"anthropic x-api-key paged by 2", anthCompat, "apikey", 2, "X-Api-Key", "key-a2"},
		{"anthropic oauth bearer", anthCompat, "oauth", 3, "Authorization", "Bearer key-a3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up.SetModelsPageSize(tc.pageSize)
			key := strings.TrimPrefix(tc.value, "Bearer ")
			got, err := client().List(context.Background(), providers.Target{Provider: tc.provider, BaseURL: base, Secret: key, AuthType: tc.auth})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("models %v, want %v", got, want)
			}
			h, _ := up.LastRequest(key)
			if h.Get(tc.header) != tc.value {
				t.Fatalf("%s = %q, want %q", tc.header, h.Get(tc.header), tc.value)
			}
			if tc.provider.Format == providers.FormatAnthropic && h.Get("Anthropic-Version") == "" {
				t.Fatal("no anthropic-version header")
			}
			if tc.auth == "oauth" && !strings.Contains(h.Get("Anthropic-Beta"), "oauth") {
				t.Fatalf("oauth beta missing: %q", h.Get("Anthropic-Beta"))
			}
			pages := 1
			if tc.pageSize > 0 {
				pages = (len(models) + tc.pageSize - 1) / tc.pageSize
			}
			if n := up.Hits(key); n != pages {
				t.Fatalf("%d requests, want %d pages", n, pages)
			}
		})
	}
}

func TestDiscoverFallsBackToCatalogue(t *testing.T) {
	up, base := fake(t)
	// A closed port: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()

	cases := []struct {
		name     string
		provider providers.Provider
		base     string
		fault    *fakeupstream.Fault
		models   []string
		code     string
		status   int
		source   string
		want     []string
	}{
		{"500 with defaults", glm, base, &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 500}, nil, discovery.CodeStatus, 500, discovery.SourceCatalog, glm.DefaultModels},
		{"401 with defaults", glm, base, &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 401}, nil, discovery.CodeStatus, 401, discovery.SourceCatalog, glm.DefaultModels},
		{"not JSON", glm, base, &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 200, Body: "<html>"}, nil, discovery.CodeInvalidBody, 0, discovery.SourceCatalog, glm.DefaultModels},
		{"no data array", glm, base, &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 200, Body: `{"object":"list"}`}, nil, discovery.CodeInvalidBody, 0, discovery.SourceCatalog, glm.DefaultModels},
		{"empty list", glm, base, nil, []string{}, discovery.CodeEmpty, 0, discovery.SourceCatalog, glm.DefaultModels},
		{"unreachable", glm, closed, nil, nil, discovery.CodeUnreachable, 0, discovery.SourceCatalog, glm.DefaultModels},
		{"no defaults: nothing", openaiCompat, base, &fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 404}, nil, discovery.CodeStatus, 404, "", nil},
		{"upstream answers", glm, base, nil, []string{"x-1"}, "", 0, discovery.SourceUpstream, []string{"x-1"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := "secret-key-" + string(rune('a'+i))
			up.SetModels(fakeupstream.DefaultModels())
			if tc.models != nil {
				up.SetModels(tc.models)
			}
			if tc.fault != nil {
				up.SetFault(key, *tc.fault)
			}
			res := client().Discover(context.Background(), providers.Target{Provider: tc.provider, BaseURL: tc.base, Secret: key, AuthType: "apikey"})
			if res.Source != tc.source || !slices.Equal(res.Models, tc.want) {
				t.Fatalf("source %q models %v, want %q %v", res.Source, res.Models, tc.source, tc.want)
			}
			if tc.code == "" {
				if res.Err != nil {
					t.Fatalf("unexpected error %v", res.Err)
				}
				return
			}
			if res.Err == nil || res.Err.Code != tc.code || res.Err.Status != tc.status {
				t.Fatalf("error %+v, want code %s status %d", res.Err, tc.code, tc.status)
			}
			if strings.Contains(res.Err.Message, key) {
				t.Fatalf("error message leaks the key: %q", res.Err.Message)
			}
		})
	}
}

func TestDiscoverHonoursContext(t *testing.T) {
	up, base := fake(t)
	up.SetFault("slow", fakeupstream.Fault{Mode: fakeupstream.ModeStallBeforeHeaders})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the stalled request is in flight: no timer involved.
	go func() {
		wait, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		if up.WaitHits(wait, "slow", 1) == nil {
			cancel()
		}
	}()
	res := client().Discover(ctx, providers.Target{Provider: glm, BaseURL: base, Secret: "slow"})
	if res.Err == nil || res.Err.Code != discovery.CodeUnreachable || !strings.Contains(res.Err.Message, "in time") || res.Source != discovery.SourceCatalog {
		t.Fatalf("stalled upstream: %+v %+v", res, res.Err)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]bool{"gpt-4o": true, " gpt-4o ": true, "": false, "a b": false, "x\x00": false, strings.Repeat("m", 201): false, strings.Repeat("m", 200): true} {
		if _, ok := discovery.Clean(in); ok != want {
			t.Errorf("Clean(%q) = %v, want %v", in, ok, want)
		}
	}
}

// TestListGemini: Gemini's native list ({models:[{name:"models/…"}]}) read
// with x-goog-api-key, page after page by nextPageToken, from a base that
// may still end in the OpenAI-compatible "/openai".
func TestListGemini(t *testing.T) {
	up, base := fake(t)
	base = strings.TrimSuffix(base, "/v1") + "/v1beta/openai"
	gem := providers.Provider{ID: "gemini", Format: providers.FormatGemini, DefaultModels: []string{"gemini-2.5-pro"}}
	up.SetGeminiModels([]string{"gemini-a", "gemini-b", "gemini-c", "gemini-d", "gemini-e"})
	for _, page := range []int{0, 2} {
		up.SetModelsPageSize(page)
		got, err := client().List(context.Background(), providers.Target{Provider: gem, BaseURL: base, Secret: "gk"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"gemini-a", "gemini-b", "gemini-c", "gemini-d", "gemini-e"}) {
			t.Fatalf("page size %d: %v", page, got)
		}
		h, _ := up.LastRequest("gk")
		if h.Get("X-Goog-Api-Key") != "gk" || h.Get("Authorization") != "" {
			t.Fatalf("headers %v", h)
		}
	}
	if up.Hits("gk") != 1+3 {
		t.Fatalf("hits %d, want 1 + 3 pages", up.Hits("gk"))
	}
	// A wrong key: the fake's 403, and the catalogue stands in.
	res := client().Discover(context.Background(), providers.Target{Provider: gem, BaseURL: base})
	if res.Source != discovery.SourceCatalog || res.Err == nil || res.Err.Status != http.StatusForbidden {
		t.Fatalf("got %+v", res)
	}
}

// TestListFamilyShapes: Together answers GET /models with a bare array, and a
// provider without a model list route (Perplexity) is never asked: its
// catalogue list stands in without an error.
func TestListFamilyShapes(t *testing.T) {
	up, base := fake(t)
	up.SetFault("key-together", fakeupstream.Fault{Mode: fakeupstream.ModeStatus, Status: 200,
		Body: `[{"id":"meta-llama/Llama-3.3-70B-Instruct-Turbo","object":"model","type":"chat"},{"id":"BAAI/bge-large-en-v1.5","object":"model","type":"embedding"}]`})
	together, _ := registry.Catalog(nil).Lookup("together")
	got, err := client().List(context.Background(), providers.Target{Provider: together, BaseURL: base, Secret: "key-together"})
	if err != nil || !slices.Equal(got, []string{"meta-llama/Llama-3.3-70B-Instruct-Turbo", "BAAI/bge-large-en-v1.5"}) {
		t.Fatalf("bare array: %v %v", got, err)
	}

	pplx, _ := registry.Catalog(nil).Lookup("perplexity")
	res := client().Discover(context.Background(), providers.Target{Provider: pplx, BaseURL: base, Secret: "key-pplx"})
	if res.Err != nil || res.Source != discovery.SourceCatalog || !slices.Equal(res.Models, pplx.DefaultModels) {
		t.Fatalf("no model list: %+v", res)
	}
	if n := up.Hits("key-pplx"); n != 0 {
		t.Fatalf("perplexity was asked for its models %d times", n)
	}
}
