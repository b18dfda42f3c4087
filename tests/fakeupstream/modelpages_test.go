package fakeupstream

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// TestAnthropicModelPages: with a page size the Anthropic-format list pages
// with has_more / last_id and after_id, the way Anthropic's API does; the
// OpenAI format and size 0 answer one page.
func TestAnthropicModelPages(t *testing.T) {
	f := newFixture(t)
	f.u.SetModels([]string{"a", "b", "c", "d", "e"})
	get := func(t *testing.T, anthropic bool, after string) (ids []string, hasMore bool, last string) {
		t.Helper()
		u := f.base + "/v1/models"
		if after != "" {
			u += "?after_id=" + url.QueryEscape(after)
		}
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, u, nil)
		if anthropic {
			req.Header.Set("X-Api-Key", "k")
		} else {
			req.Header.Set("Authorization", "Bearer k")
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		for _, d := range page.Data {
			ids = append(ids, d.ID)
		}
		return ids, page.HasMore, page.LastID
	}
	if ids, more, _ := get(t, true, ""); !slices.Equal(ids, []string{"a", "b", "c", "d", "e"}) || more {
		t.Fatalf("unpaged: %v more=%v", ids, more)
	}
	f.u.SetModelsPageSize(2)
	var all []string
	after := ""
	for i := 0; i < 3; i++ {
		ids, more, last := get(t, true, after)
		all = append(all, ids...)
		if more != (i < 2) {
			t.Fatalf("page %d has_more=%v", i, more)
		}
		after = last
	}
	if !slices.Equal(all, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("pages %v", all)
	}
	if ids, _, _ := get(t, false, ""); len(ids) != 5 {
		t.Fatalf("OpenAI format paged: %v", ids)
	}
}
