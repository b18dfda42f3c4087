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
// headers every wire format shares are set, then the call's extra headers; no
// client header is copied.
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
	// The call's own extra headers (e.g. the usage wall's anthropic-usage-limit).
	for k, vs := range c.Header {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return req, nil
}
