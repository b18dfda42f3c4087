package gemini

import (
	"testing"
)

func TestCountTokens(t *testing.T) {
	tests := []struct {
		body string
		want int
	}{
		{`{}`, 0},
		{`{"contents":[{"role":"user","parts":[{"text":"12345678"}]}]}`, 4 + 2 + 3},
		{`{"generateContentRequest":{"model":"models/x","systemInstruction":{"parts":[{"text":"abcd"}]},"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA"}}]}]}}`, 4 + 258 + 1 + 3},
		{`{"contents":[{"parts":[{"functionCall":{"name":"ab","args":{}}}]}],"tools":[{"functionDeclarations":[{"name":"f","description":"abc"}]}]}`, 4 + 8 + 2 + 3},
	}
	for _, tt := range tests {
		got, err := CountTokens([]byte(tt.body))
		if err != nil || got != tt.want {
			t.Errorf("CountTokens(%s) = %d, %v; want %d", tt.body, got, err, tt.want)
		}
	}
	if _, err := CountTokens([]byte(`{"contents":1}`)); err == nil {
		t.Error("contents: 1 accepted")
	}
	if got := string(CountTokensResponse(42)); got != `{"totalTokens":42}` {
		t.Errorf("got %s", got)
	}
}

func TestCountRequestFromGenerate(t *testing.T) {
	out, err := CountRequestFromGenerate([]byte(`{"contents":[{"parts":[{"text":"hi"}]}],"model":"drop","generationConfig":{"temperature":1}}`), "gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, out, map[string]string{
		"generateContentRequest": `{"model":"models/gemini-2.5-flash","contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"temperature":1}}`,
	})
	n, err := ParseCountTokens([]byte(`{"totalTokens":31,"cachedContentTokenCount":0}`))
	if err != nil || n != 31 {
		t.Fatalf("got %d, %v", n, err)
	}
	if _, err := ParseCountTokens([]byte(`{}`)); err == nil {
		t.Fatal("missing totalTokens accepted")
	}
}
