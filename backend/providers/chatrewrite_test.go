package providers

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// TestRewriteChat: a stream's data lines go through chunk as soon as each is
// complete (other lines, line ends and a last line without its newline as
// they came) and a read error reaches the caller after what was read; a JSON
// answer goes through answer whole, its length then unknown; an error
// answer and a kind without a func pass untouched.
func TestRewriteChat(t *testing.T) {
	upper := func(b []byte) []byte { return []byte(strings.ToUpper(string(b))) }
	broken := errors.New("connection reset")
	body := io.MultiReader(strings.NewReader("data: {\"a\":1}\r\n\r\n: keep-alive\n\ndata:{\"b\":2}\n\ndata: [done]"), iotest.ErrReader(broken))
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Length": {"9"}}, ContentLength: 9, Body: io.NopCloser(body)}
	RewriteChat(resp, true, nil, upper)
	got, err := io.ReadAll(iotest.OneByteReader(resp.Body))
	if want := "data: {\"A\":1}\r\n\r\n: keep-alive\n\ndata:{\"B\":2}\n\ndata: [DONE]"; string(got) != want || !errors.Is(err, broken) ||
		resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
		t.Fatalf("stream: %q %v (want %q)", got, err, want)
	}

	resp = &http.Response{StatusCode: 200, Header: http.Header{}, ContentLength: 7, Body: io.NopCloser(strings.NewReader(`{"a":1}`))}
	RewriteChat(resp, false, upper, nil)
	if got, err := io.ReadAll(resp.Body); string(got) != `{"A":1}` || err != nil || resp.ContentLength != -1 {
		t.Fatalf("json: %q %v", got, err)
	}

	for _, c := range []struct {
		status int
		stream bool
	}{{429, false}, {500, true}, {200, true}} {
		resp = &http.Response{StatusCode: c.status, Header: http.Header{}, ContentLength: 7, Body: io.NopCloser(strings.NewReader(`{"a":1}`))}
		chunk := upper
		if c.status == 200 {
			chunk = nil
		}
		RewriteChat(resp, c.stream, upper, chunk)
		if got, _ := io.ReadAll(resp.Body); string(got) != `{"a":1}` || resp.ContentLength != 7 {
			t.Errorf("%d stream %v: %q", c.status, c.stream, got)
		}
	}
}
