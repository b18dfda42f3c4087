package providers

import (
	"bytes"
	"context"
	"io"
	"testing"
	"testing/iotest"

	"github.com/tidwall/gjson"
)

// TestWithModel: only the top-level "model" value changes, every other byte
// stays as the client sent it, and the input body is never written to.
func TestWithModel(t *testing.T) {
	tests := []struct {
		name, body, model, want string
	}{
		{"plain", `{"model":"a/b","x":1}`, "b", `{"model":"b","x":1}`},
		{"spacing and order kept", `{"messages":[{"model":"inner"}],  "model" : "combo/x" ,"t":0.70}`, "gpt-4o-mini",
			`{"messages":[{"model":"inner"}],  "model" : "gpt-4o-mini" ,"t":0.70}`},
		{"escaped old value", `{"model":"a\u002fb\"c","s":true}`, "m-1.5", `{"model":"m-1.5","s":true}`},
		{"same model", `{"model":"gpt-4o-mini"}`, "gpt-4o-mini", `{"model":"gpt-4o-mini"}`},
		{"model needing escapes", `{"model":"x"}`, "a\"b\u00e9", `{"model":"a\"bé"}`},
		{"no model", `{"x":1}`, "m", `{"x":1,"model":"m"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.body)
			got, err := withModel(in, tt.model)
			if err != nil {
				t.Fatal(err)
			}
			if string(in) != tt.body {
				t.Fatalf("input modified: %s", in)
			}
			if gjson.GetBytes(got, "model").String() != tt.model {
				t.Fatalf("model of %s is not %q", got, tt.model)
			}
			if !bytes.Equal(got, []byte(tt.want)) {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestJSONRequestBodyIsWithModel: the request body, read in reads of any
// size and again through GetBody, is withModel's body byte for byte, and its
// ContentLength is that body's length.
func TestJSONRequestBodyIsWithModel(t *testing.T) {
	var r Requests
	for _, c := range []struct{ body, model string }{
		{`{"model":"a/b","x":1}`, "b"},
		{`{"model":"b","x":1}`, "b"},
		{`{"messages":[{"model":"inner"}],  "model" : "combo/x" ,"t":0.70}`, "gpt-4o-mini"},
		{`{"model":"a/b"}`, `needs "escaping"`},
		{`{"x":1}`, "m"},
	} {
		want, err := withModel([]byte(c.body), c.model)
		if err != nil {
			t.Fatal(err)
		}
		req, err := r.JSON(context.Background(), &Target{BaseURL: "http://127.0.0.1:9", Model: c.model},
			Call{Body: []byte(c.body)}, "/v1", "ua", Credential{})
		if err != nil {
			t.Fatal(err)
		}
		if req.ContentLength != int64(len(want)) {
			t.Errorf("%s: ContentLength %d, want %d", c.body, req.ContentLength, len(want))
		}
		for i, rd := range []func() io.Reader{
			func() io.Reader { return iotest.OneByteReader(req.Body) },
			func() io.Reader {
				b, err := req.GetBody()
				if err != nil {
					t.Fatal(err)
				}
				return b
			},
		} {
			got, err := io.ReadAll(rd())
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: read %d: %q (%v), want %q", c.body, i, got, err, want)
			}
		}
	}
}

// TestCallStorageIsTakenOnce: the first request built with a call's storage
// keeps its URL, header values, credential and body reader there; a second
// request of the same call gets storage of its own, so the first request's
// values are never overwritten while the transport may still read them.
func TestCallStorageIsTakenOnce(t *testing.T) {
	var r Requests
	var cs CallStorage
	call := Call{Body: []byte(`{"model":"m","x":1}`), Storage: &cs}
	cred := Credential{Name: "Authorization", Prefix: "Bearer ", Secret: "sk-one"}
	first, err := r.JSON(context.Background(), &Target{BaseURL: "http://127.0.0.1:9/a", Model: "one"}, call, "/v1", "ua", cred)
	if err != nil {
		t.Fatal(err)
	}
	if first.URL != &cs.s.url || !cs.used {
		t.Fatalf("the first request does not use the call's storage (URL %p, storage %p)", first.URL, &cs.s.url)
	}
	cred.Secret = "sk-two"
	second, err := r.JSON(context.Background(), &Target{BaseURL: "http://127.0.0.1:9/b", Model: "two"}, call, "/v1", "ua", cred)
	if err != nil {
		t.Fatal(err)
	}
	if second.URL == first.URL {
		t.Fatal("the second request shares the first one's storage")
	}
	if got := first.URL.String() + " " + first.Header.Get("Authorization"); got != "http://127.0.0.1:9/a/v1 Bearer sk-one" {
		t.Errorf("first request after the second was built: %s", got)
	}
	b, _ := io.ReadAll(first.Body)
	if gjson.GetBytes(b, "model").String() != "one" {
		t.Errorf("first request body after the second was built: %s", b)
	}
}
