package gateway

import "testing"

// TestHiddenUsage: the usage a client did not ask for is cut out of each
// chunk (leaving valid JSON byte for byte as the upstream writes it without
// usage), and the usage-only chunk is dropped whole.
func TestHiddenUsage(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"null last", `{"id":"x","choices":[{"delta":{"content":"a"}}],"usage":null}`, `{"id":"x","choices":[{"delta":{"content":"a"}}]}`},
		{"null first", `{"usage":null,"id":"x","choices":[]}`, `{"id":"x","choices":[]}`},
		{"null first, spaced", `{ "usage" : null , "id":"x"}`, `{ "id":"x"}`},
		{"only member", `{"usage":null}`, `{}`},
		{"usage chunk", `{"id":"x","choices":[],"usage":{"prompt_tokens":1}}`, ""},
		{"usage chunk, spaced choices", `{"choices":[ ],"usage":{"prompt_tokens":1}}`, ""},
		{"usage in an answer chunk", `{"choices":[{"delta":{}}],"usage":{"prompt_tokens":1},"x":1}`, `{"choices":[{"delta":{}}],"x":1}`},
		{"nested usage kept", `{"choices":[{"delta":{"content":"\"usage\":null"}}]}`, `{"choices":[{"delta":{"content":"\"usage\":null"}}]}`},
		{"no usage", `{"choices":[]}`, `{"choices":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, drop := hiddenUsage([]byte(c.in))
			if drop != (c.want == "") {
				t.Fatalf("drop %v, want %v", drop, c.want == "")
			}
			if !drop && string(out) != c.want {
				t.Errorf("got %s, want %s", out, c.want)
			}
		})
	}
}

// TestAskUsage: the upstream body asks for usage, the client's other stream
// options kept.
func TestAskUsage(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"stream":true}`, `{"stream":true,"stream_options":{"include_usage":true}}`},
		{`{"stream":true,"stream_options":{"include_usage":false,"x":1}}`, `{"stream":true,"stream_options":{"include_usage":true,"x":1}}`},
		{`{"stream":true,"stream_options":null}`, `{"stream":true,"stream_options":{"include_usage":true}}`},
		{"{\"stream\":true }\n", "{\"stream\":true ,\"stream_options\":{\"include_usage\":true}}\n"},
		{`{ }`, `{ "stream_options":{"include_usage":true}}`},
		{`{"stream":true,"stream_options":{}}`, `{"stream":true,"stream_options":{"include_usage":true}}`},
	}
	for _, c := range cases {
		got, err := askUsage([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("askUsage(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}
