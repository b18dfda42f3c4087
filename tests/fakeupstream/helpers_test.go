package fakeupstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait of a test so a bug fails instead of hanging;
// it never decides an outcome on the happy path.
const testTimeout = 10 * time.Second

// fixture is a started fake and a private client for it.
type fixture struct {
	u      *Upstream
	base   string
	client *http.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	u := New()
	base := u.Start()
	tr := &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}
	f := &fixture{u: u, base: base, client: &http.Client{Transport: tr}}
	t.Cleanup(func() {
		u.Close()
		tr.CloseIdleConnections()
	})
	return f
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// call is one request to the fake.
type call struct {
	format Format
	key    string // sent as Bearer (OpenAI) or x-api-key (Anthropic); "" sends none
	bearer bool   // send the key as Bearer even on the Anthropic route
	model  string
	stream bool
	header map[string]string
	raw    string // the request body, when set (model and stream are then ignored)
}

func (c call) path() string {
	if c.format == FormatAnthropic {
		return "/v1/messages"
	}
	return "/v1/chat/completions"
}

func (c call) body() string {
	if c.raw != "" {
		return c.raw
	}
	model := c.model
	if model == "" {
		model = "gpt-4o-mini"
	}
	if c.format == FormatAnthropic {
		return fmt.Sprintf(`{"model":%q,"max_tokens":64,"stream":%t,"messages":[{"role":"user","content":"hi"}]}`, model, c.stream)
	}
	return fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"hi"}]}`, model, c.stream)
}

func (f *fixture) request(ctx context.Context, t *testing.T, c call) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.base+c.path(), strings.NewReader(c.body()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		if c.format == FormatAnthropic && !c.bearer {
			req.Header.Set("x-api-key", c.key)
			req.Header.Set("anthropic-version", "2023-06-01")
		} else {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	return req
}

// do sends c and returns the response with its whole body read.
func (f *fixture) do(t *testing.T, c call) (*http.Response, []byte) {
	t.Helper()
	resp, err := f.client.Do(f.request(testCtx(t), t, c))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// frame is one SSE event, or one SSE comment (a heartbeat).
type frame struct {
	event   string
	data    string
	comment string // text after ": " of a comment-only frame
}

// frameReader parses SSE line by line and fails on any line that is not
// "event: ...", "data: ...", ": comment" or blank, on a frame mixing a
// comment with data, and on a stream ending inside a frame, so framing bugs
// show up.
type frameReader struct {
	r *bufio.Reader
}

func newFrameReader(r io.Reader) *frameReader { return &frameReader{r: bufio.NewReader(r)} }

func (fr *frameReader) next() (frame, error) {
	var f frame
	seen := false
	for {
		line, err := fr.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && !seen {
				return f, io.EOF
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if !seen {
				return f, errors.New("blank line without a frame")
			}
			return f, nil
		case strings.HasPrefix(line, "event: "):
			f.event, seen = strings.TrimPrefix(line, "event: "), true
		case strings.HasPrefix(line, "data: "):
			if f.data != "" {
				return f, errors.New("two data lines in one frame")
			}
			f.data, seen = strings.TrimPrefix(line, "data: "), true
		case strings.HasPrefix(line, ": "):
			if seen {
				return f, errors.New("comment inside a frame")
			}
			f.comment = strings.TrimPrefix(line, ": ")
			if next, err := fr.r.ReadString('\n'); err != nil || next != "\n" {
				return f, fmt.Errorf("comment %q not followed by a blank line (%q, %v)", line, next, err)
			}
			return f, nil
		default:
			return f, fmt.Errorf("bad SSE line %q", line)
		}
	}
}

// readFrames reads frames until EOF or error.
func readFrames(r io.Reader) ([]frame, error) {
	fr := newFrameReader(r)
	var out []frame
	for {
		f, err := fr.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
}

// contentOf returns the text of a content frame and whether it is one.
func contentOf(format Format, f frame) (string, bool) {
	if format == FormatAnthropic {
		if f.event != "content_block_delta" {
			return "", false
		}
		return gjson.Get(f.data, "delta.text").String(), true
	}
	if f.data == "[DONE]" {
		return "", false
	}
	c := gjson.Get(f.data, "choices.0.delta.content")
	if !c.Exists() || gjson.Get(f.data, "choices.0.delta.role").Exists() {
		return "", false
	}
	return c.String(), true
}

// contentFrames counts content frames and joins their text.
func contentFrames(format Format, frames []frame) (int, string) {
	n := 0
	var b bytes.Buffer
	for _, f := range frames {
		if s, ok := contentOf(format, f); ok {
			n++
			b.WriteString(s)
		}
	}
	return n, b.String()
}

// isComplete reports whether frames end like a finished stream.
func isComplete(format Format, frames []frame) bool {
	if len(frames) == 0 {
		return false
	}
	last := frames[len(frames)-1]
	if format == FormatAnthropic {
		return last.event == "message_stop"
	}
	return last.data == "[DONE]"
}

// describe names a frame for exact sequence assertions:
//
//	OpenAI:    role, reasoning, content, tool_header:NAME, args,
//	           finish:REASON, usage, [DONE], error, malformed, comment:TEXT
//	Anthropic: message_start, start:TYPE@I, ping, DELTA_TYPE@I, stop@I,
//	           message_delta:STOP_REASON, message_stop, error, malformed,
//	           comment:TEXT
func describe(format Format, f frame) string {
	switch {
	case f.comment != "":
		return "comment:" + f.comment
	case f.data == "[DONE]" && format == FormatOpenAI:
		return "[DONE]"
	case !gjson.Valid(f.data):
		return "malformed"
	}
	d := gjson.Parse(f.data)
	if format == FormatAnthropic {
		idx := d.Get("index").String()
		switch f.event {
		case "content_block_start":
			return "start:" + d.Get("content_block.type").String() + "@" + idx
		case "content_block_delta":
			return d.Get("delta.type").String() + "@" + idx
		case "content_block_stop":
			return "stop@" + idx
		case "message_delta":
			return "message_delta:" + d.Get("delta.stop_reason").String()
		}
		return f.event
	}
	delta := d.Get("choices.0.delta")
	switch {
	case d.Get("error").Exists():
		return "error"
	case d.Get("choices").IsArray() && len(d.Get("choices").Array()) == 0 && d.Get("usage").IsObject():
		return "usage"
	case delta.Get("role").Exists():
		return "role"
	case delta.Get("reasoning_content").Exists():
		return "reasoning"
	case delta.Get("tool_calls.0.id").Exists():
		return "tool_header:" + delta.Get("tool_calls.0.function.name").String()
	case delta.Get("tool_calls.0.function.arguments").Exists():
		return "args"
	case delta.Get("content").Exists():
		return "content"
	case d.Get("choices.0.finish_reason").Type == gjson.String:
		return "finish:" + d.Get("choices.0.finish_reason").String()
	}
	return "unknown:" + f.data
}

// describeAll describes every frame.
func describeAll(format Format, frames []frame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = describe(format, f)
	}
	return out
}

// seq builds an expected sequence: strings as they are, []string spliced.
func seq(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

// times repeats s n times.
func times(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// joined concatenates the payload of the delta frames of one kind:
// "reasoning", "content" or "args".
func joined(format Format, frames []frame, kind string) string {
	var b strings.Builder
	for _, f := range frames {
		if f.comment != "" || !gjson.Valid(f.data) {
			continue
		}
		d := gjson.Parse(f.data)
		var v gjson.Result
		if format == FormatAnthropic {
			if f.event != "content_block_delta" {
				continue
			}
			v = d.Get(map[string]string{"reasoning": "delta.thinking", "content": "delta.text", "args": "delta.partial_json"}[kind])
		} else {
			v = d.Get(map[string]string{"reasoning": "choices.0.delta.reasoning_content", "content": "choices.0.delta.content",
				"args": "choices.0.delta.tool_calls.0.function.arguments"}[kind])
		}
		b.WriteString(v.String())
	}
	return b.String()
}
