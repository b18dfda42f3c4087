package fakeupstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Remote drives a fake running in another process (the standalone command)
// through its /_fake/ control API, with the same verbs as the in-process
// methods, for end-to-end tests of the built gateway binary.
type Remote struct {
	// BaseURL is the fake's base URL, e.g. "http://127.0.0.1:41234".
	BaseURL string
	// Client is the HTTP client used; nil means http.DefaultClient.
	Client *http.Client
}

// SetFault makes f the only fault of key ("*" = every key).
func (c Remote) SetFault(ctx context.Context, key string, f Fault) error {
	return c.do(ctx, http.MethodPost, "/_fake/faults", FaultRequest{Key: key, Fault: f}, nil)
}

// AddFault appends f to key's faults.
func (c Remote) AddFault(ctx context.Context, key string, f Fault) error {
	return c.do(ctx, http.MethodPost, "/_fake/faults", FaultRequest{Key: key, Fault: f, Append: true}, nil)
}

// ClearFaults removes every fault.
func (c Remote) ClearFaults(ctx context.Context) error {
	return c.do(ctx, http.MethodDelete, "/_fake/faults", nil, nil)
}

// Reset puts the remote fake back in its New state.
func (c Remote) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/_fake/reset", nil, nil)
}

// Configure applies cfg (zero fields unchanged).
func (c Remote) Configure(ctx context.Context, cfg Config) error {
	return c.do(ctx, http.MethodPost, "/_fake/config", cfg, nil)
}

// Stats returns the per-key hits and the in-flight count.
func (c Remote) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := c.do(ctx, http.MethodGet, "/_fake/stats", nil, &s)
	return s, err
}

// LastRequest returns the last request that carried key.
func (c Remote) LastRequest(ctx context.Context, key string) (LastRequestInfo, error) {
	var info LastRequestInfo
	err := c.do(ctx, http.MethodGet, "/_fake/last?key="+url.QueryEscape(key), nil, &info)
	return info, err
}

func (c Remote) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("fakeupstream: %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(raw))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}
