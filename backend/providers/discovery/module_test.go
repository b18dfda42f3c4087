package discovery_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/providers/discovery"
)

// TestModuleListAddsOwnModels: a module's own model list (here an
// OpenAI-shaped one, ParseList) is followed by the names the connection
// gives itself (OwnModels), like a format's list; an answer that is not
// JSON says so.
func TestModuleListAddsOwnModels(t *testing.T) {
	var body atomic.Pointer[string]
	body.Store(new(`{"data":[{"id":"up-1"},{"id":"own-1"}]}`))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(*body.Load())) }))
	t.Cleanup(srv.Close)
	m := &providers.Module{ID: "acme",
		Models: &providers.ModelList{Parse: discovery.ParseList, Shape: `"data" array`,
			Requests: func(ctx context.Context, t providers.Target, ua string, _ time.Time) ([]*http.Request, error) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.BaseURL+"/list", nil)
				return []*http.Request{req}, err
			}},
		OwnModels: func(providers.Target) []string { return []string{"own-2", "own-1"} }}
	tg := providers.Target{Provider: providers.Provider{ID: "acme", Module: m}, BaseURL: srv.URL}
	c := &discovery.Client{HTTP: srv.Client()}
	got, err := c.List(context.Background(), tg)
	if err != nil || !slices.Equal(got, []string{"up-1", "own-1", "own-2"}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, b := range []struct{ body, msg string }{{"<html>", "not JSON"}, {`{"object":"list"}`, `no "data" array`}} {
		body.Store(&b.body)
		_, err := c.List(context.Background(), tg)
		var de *discovery.Error
		if !errors.As(err, &de) || de.Code != discovery.CodeInvalidBody || !strings.Contains(de.Message, b.msg) {
			t.Errorf("%s: %v", b.body, err)
		}
	}
}
