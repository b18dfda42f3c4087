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
// headers every wire format shares are set, then the provider's and the
// call's extra headers, then own (the executor's headers, pairs of canonical
// name and value, e.g. its credential, which replace any of the same name);
// no client header is copied. The shared headers and own take one allocation
// for all their values.
func NewJSONRequest(ctx context.Context, t Target, c Call, path, userAgent string, own ...string) (*http.Request, error) {
	body, err := withModel(c.Body, t.Model)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := make(http.Header, 4+len(own)/2+len(t.Provider.ExtraHeaders)+len(c.Header))
	req.Header = h
	accept := "application/json"
	if c.Stream {
		accept = "text/event-stream"
	}
	vals := make([]string, 3+len(own)/2)
	vals[0], vals[1], vals[2] = "application/json", accept, userAgent
	h["Content-Type"] = vals[0:1:1]
	h["Accept"] = vals[1:2:2]
	h["User-Agent"] = vals[2:3:3]
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
	// The executor's own last: they replace any of the same name above.
	for i := 0; i+1 < len(own); i += 2 {
		j := 3 + i/2
		vals[j] = own[i+1]
		h[own[i]] = vals[j : j+1 : j+1]
	}
	return req, nil
}

// withModel returns body with its top-level "model" set to model. The common
// case, a string model and a plain name, splices the new value in place of the
// old one in one copy, leaving every other byte as the client sent it; other
// cases go through sjson. The body is never modified (it may be retried).
func withModel(body []byte, model string) ([]byte, error) {
	old := gjson.GetBytes(body, "model")
	if old.Type == gjson.String && old.Str == model {
		return body, nil
	}
	if old.Type != gjson.String || old.Index <= 0 || !plainJSONString(model) {
		return sjson.SetBytes(body, "model", model)
	}
	out := make([]byte, 0, len(body)-len(old.Raw)+len(model)+2)
	out = append(out, body[:old.Index]...)
	out = append(out, '"')
	out = append(out, model...)
	out = append(out, '"')
	return append(out, body[old.Index+len(old.Raw):]...), nil
}

// plainJSONString reports whether s needs no escaping inside a JSON string.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
