package providers

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// NewJSONRequest builds an upstream POST from scratch: the body's "model" is
// rewritten to the target's model (in place of a full decode), and only the
// headers every wire format shares are set; no client header is copied.
func NewJSONRequest(ctx context.Context, t Target, c Call, path, userAgent string) (*http.Request, error) {
	body := c.Body
	if gjson.GetBytes(body, "model").String() != t.Model {
		var err error
		if body, err = sjson.SetBytes(body, "model", t.Model); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	if c.Stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	h.Set("User-Agent", userAgent)
	for k, v := range t.Provider.ExtraHeaders {
		h.Set(k, v)
	}
	return req, nil
}

// ApplyCallHeaders sets the call's extra headers on req, last, so they win.
func ApplyCallHeaders(req *http.Request, c Call) {
	for k, vs := range c.Header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
}

// MergeBetas joins anthropic-beta values (comma separated lists) keeping the
// first occurrence of each flag in order, so the OAuth beta a subscription
// token needs is added to whatever betas the client asked for, never replacing them.
func MergeBetas(lists ...string) string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, f := range strings.Split(l, ",") {
			f = strings.TrimSpace(f)
			if f == "" || seen[f] {
				continue
			}
			seen[f] = true
			out = append(out, f)
		}
	}
	return strings.Join(out, ",")
}
