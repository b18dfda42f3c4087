package routing

import (
	"errors"
	"testing"

	"omniroute/backend/errs"
	"omniroute/backend/providers/registry"
	"omniroute/backend/store"
)

type plainBox struct{}

func (plainBox) Open(s string) (string, error) { return s, nil }

func testRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry(registry.Catalog(nil))
	rows := []store.Connection{
		{ID: "oa2", Provider: "openai", Name: "second", AuthType: "apikey", Priority: 2, IsActive: true, Models: `["gpt-4o"]`, CreatedAt: 1},
		{ID: "oa1", Provider: "openai", Name: "first", AuthType: "apikey", Priority: 1, IsActive: true, Models: `["gpt-4o"]`, CreatedAt: 2},
		{ID: "oa3", Provider: "openai", Name: "off", AuthType: "apikey", Priority: 0, IsActive: false, CreatedAt: 3},
		{ID: "wall", Provider: "openai-compatible", Name: "wall", BaseURL: "http://x/v1", Prefix: "wall", Priority: 1, IsActive: true, Models: `["m1"]`, CreatedAt: 4},
		{ID: "oc", Provider: "openai-compatible", Name: "other", BaseURL: "http://y/v1", Priority: 5, IsActive: true, CreatedAt: 5},
		{ID: "glm", Provider: "glm", Name: "glm", Priority: 1, IsActive: true, CreatedAt: 6},
	}
	if err := r.Load(rows, plainBox{}); err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(c []Candidate) []string {
	out := make([]string, len(c))
	for i, x := range c {
		out[i] = x.Conn.ID + ":" + x.Model
	}
	return out
}

func TestResolve(t *testing.T) {
	r := testRegistry(t)
	tests := []struct {
		model  string
		access Access
		want   []string
		code   string
	}{
		{model: "openai/gpt-4o-mini", want: []string{"oa1:gpt-4o-mini", "oa2:gpt-4o-mini"}},
		{model: "oai/gpt-4o", want: []string{"oa1:gpt-4o", "oa2:gpt-4o"}},
		{model: "OpenAI/gpt-4o", want: []string{"oa1:gpt-4o", "oa2:gpt-4o"}},
		{model: "gpt-4o", want: []string{"oa1:gpt-4o", "oa2:gpt-4o"}},
		{model: "wall/m1", want: []string{"wall:m1"}},
		{model: "openai-compatible/m1", want: []string{"wall:m1", "oc:m1"}},
		{model: "zai/glm-4.6", want: []string{"glm:glm-4.6"}},
		{model: "openrouter/anthropic/claude-3.5", code: "MODEL_NOT_FOUND"},
		{model: "unknown-model", code: "MODEL_NOT_FOUND"},
		{model: "nope/x", code: "MODEL_NOT_FOUND"},
		{model: "  ", code: "MODEL_REQUIRED"},
		{model: "openai/gpt-4o", access: Access{AllowedConnections: []string{"oa2"}}, want: []string{"oa2:gpt-4o"}},
		{model: "openai/gpt-4o", access: Access{AllowedModels: []string{"glm/x"}}, code: "MODEL_NOT_ALLOWED"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, err := r.Resolve(tt.model, tt.access)
			if tt.code != "" {
				var e *errs.Error
				if !errors.As(err, &e) || e.Code != tt.code {
					t.Fatalf("err = %v, want code %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got); len(g) != len(tt.want) || func() bool {
				for i := range g {
					if g[i] != tt.want[i] {
						return true
					}
				}
				return false
			}() {
				t.Fatalf("got %v, want %v", g, tt.want)
			}
		})
	}
}

func TestUserDefinedEndpointsAreTheirOwnBreakerProvider(t *testing.T) {
	r := testRegistry(t)
	wall, _ := r.Get("wall")
	other, _ := r.Get("oc")
	openai, _ := r.Get("oa1")
	if wall.BreakerKey != "openai-compatible:wall" || other.BreakerKey != "openai-compatible:oc" || openai.BreakerKey != "openai" {
		t.Fatalf("breaker keys %q %q %q", wall.BreakerKey, other.BreakerKey, openai.BreakerKey)
	}
}
