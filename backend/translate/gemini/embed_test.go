package gemini

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"testing"
)

func TestEmbedRequestFromOpenAI(t *testing.T) {
	for _, tt := range []struct {
		name, model, in, want, errField string
	}{
		{"one string", "gemini-embedding-001", `{"model":"x","input":"hello"}`,
			`{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"hello"}]}}]}`, ""},
		{"strings with dimensions, models/ prefix kept once", "models/text-embedding-004",
			`{"model":"x","input":["a","b \"q\""],"dimensions":256,"encoding_format":"base64","user":"u"}`,
			`{"requests":[{"model":"models/text-embedding-004","content":{"parts":[{"text":"a"}]},"outputDimensionality":256},` +
				`{"model":"models/text-embedding-004","content":{"parts":[{"text":"b \"q\""}]},"outputDimensionality":256}]}`, ""},
		{"token arrays", "m", `{"input":[[1,2,3]]}`, "", "input"},
		{"mixed array", "m", `{"input":["a",5]}`, "", "input"},
		{"empty array", "m", `{"input":[]}`, "", "input"},
		{"a number", "m", `{"input":5}`, "", "input"},
		{"no input", "m", `{}`, "", "input"},
		{"dimensions zero", "m", `{"input":"a","dimensions":0}`, "", "dimensions"},
		{"dimensions fraction", "m", `{"input":"a","dimensions":1.5}`, "", "dimensions"},
		{"dimensions string", "m", `{"input":"a","dimensions":"8"}`, "", "dimensions"},
		{"not an object", "m", `["a"]`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EmbedRequestFromOpenAI([]byte(tt.in), tt.model)
			if tt.want == "" {
				ie, ok := err.(*InputError)
				if !ok || ie.Field != tt.errField {
					t.Fatalf("got %s, %v; want an error on %q", got, err, tt.errField)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestEmbeddingsToOpenAI(t *testing.T) {
	le := func(fs ...float32) string {
		var b []byte
		for _, f := range fs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	for _, tt := range []struct {
		name, in string
		b64      bool
		tokens   int
		want     string
	}{
		{"floats", `{"embeddings":[{"values":[0.25,-1]},{"values":[1e-3]}]}`, false, 3,
			`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.25,-1]},{"object":"embedding","index":1,"embedding":[1e-3]}],"model":"gemini-embedding-001","usage":{"prompt_tokens":3,"total_tokens":3}}`},
		{"base64", `{"embeddings":[{"values":[0.25,-1,0.1]}]}`, true, 0,
			`{"object":"list","data":[{"object":"embedding","index":0,"embedding":"` + le(0.25, -1, 0.1) + `"}],"model":"gemini-embedding-001","usage":{"prompt_tokens":0,"total_tokens":0}}`},
		{"none", `{"embeddings":[]}`, false, 0,
			`{"object":"list","data":[],"model":"gemini-embedding-001","usage":{"prompt_tokens":0,"total_tokens":0}}`},
		{"no embeddings", `{"candidates":[]}`, false, 0, ""},
		{"no values", `{"embeddings":[{}]}`, false, 0, ""},
		{"a value not a number", `{"embeddings":[{"values":[0.1,"x"]}]}`, false, 0, ""},
		{"not JSON", `{"embeddings":`, false, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EmbeddingsToOpenAI([]byte(tt.in), "gemini-embedding-001", tt.b64, tt.tokens)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestEstimateEmbedTokens(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{`{"input":"abcd"}`, 1},
		{`{"input":"abcde"}`, 2},
		{`{"input":["abcd","é"]}`, 2},
		{`{"input":""}`, 0},
		{`{}`, 0},
	} {
		if got := EstimateEmbedTokens([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.in, got, tt.want)
		}
	}
}
