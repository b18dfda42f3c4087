package gemini

import (
	"errors"
	"testing"

	"omniroute/backend/translate/sse"
)

func TestDropEmptyTextParts(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"nothing to drop", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, ``},
		{"an empty string elsewhere", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"labels":{"a":""}}`, ``},
		{"empty text after a call", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}},{"text":""}]}],"x":1}`,
			`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]}],"x":1}`},
		{"a turn of nothing is left out", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"","thoughtSignature":"s"}]},{"role":"user","parts":[{"text":"b"}]}]}`,
			`{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"user","parts":[{"text":"b"}]}]}`},
		{"empty text with data is kept", `{"contents":[{"role":"user","parts":[{"text":"","inlineData":{"mimeType":"image/png","data":"AA"}}]}]}`, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := c.want
			if want == "" {
				want = c.in
			}
			if got := string(DropEmptyTextParts([]byte(c.in))); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestReframe(t *testing.T) {
	chunk := `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"index":0}]}`
	last := `{"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":1}}`
	for _, framing := range []Framing{FramingSSE, FramingJSONArray} {
		s := NewStreamReframe(framing)
		var out []byte
		var err error
		out, _ = s.Event(out, sse.Event{Comment: true})
		for _, d := range []string{chunk, last} {
			if out, err = s.Event(out, sse.Event{Data: []byte(d)}); err != nil {
				t.Fatal(err)
			}
		}
		if !s.Complete() {
			t.Fatal("a finishReason did not complete the stream")
		}
		out = s.End(out)
		want := "data: " + chunk + "\n\ndata: " + last + "\n\n"
		if framing == FramingJSONArray {
			want = "[" + chunk + ",\r\n" + last + "]"
		}
		if string(out) != want {
			t.Fatalf("framing %d:\n%q\nwant\n%q", framing, out, want)
		}
		if u := s.Usage(); u.InputTokens != 3 || u.OutputTokens != 3 || u.ReasoningTokens != 1 {
			t.Fatalf("usage %+v", u)
		}
	}
	// Cut before a finishReason: not complete; the error closes the array.
	s := NewStreamReframe(FramingJSONArray)
	out, _ := s.Event(nil, sse.Event{Data: []byte(chunk)})
	if s.Complete() {
		t.Fatal("complete without a finishReason")
	}
	out = s.(ErrorWriter).AppendError(out, 500, "", "cut")
	if want := "[" + chunk + `,` + "\r\n" + `{"error":{"code":500,"message":"cut","status":"INTERNAL"}}]`; string(out) != want {
		t.Fatalf("%q", out)
	}
	// An error chunk is an *UpstreamStreamError with Google's status.
	_, err := NewStreamReframe(FramingSSE).Event(nil, sse.Event{Data: []byte(`{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`)})
	var ue *UpstreamStreamError
	if !errors.As(err, &ue) || ue.Code != "RESOURCE_EXHAUSTED" {
		t.Fatalf("%v", err)
	}
}
