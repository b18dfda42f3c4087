package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ChatRewriter is an executor that sends calls through Wire and gives the
// gateway the chat answers rewritten by Answer and Chunk (RewriteChat); a
// module whose vendor adds reasoning members to the OpenAI wire uses it.
type ChatRewriter struct {
	Wire          Executor
	Answer, Chunk func([]byte) []byte
}

// Do implements Executor.
func (e ChatRewriter) Do(ctx context.Context, t *Target, c Call) (*http.Response, error) {
	resp, err := e.Wire.Do(ctx, t, c)
	if err != nil || c.Path != "" {
		return resp, err
	}
	return RewriteChat(resp, c.Stream, e.Answer, e.Chunk), nil
}

// ReplayThinking walks a Chat body's messages carrying thinking_blocks (the
// pivot's signed reasoning): it removes each one's thinking_blocks and, unless
// the message already has the vendor's own member own, lets give write the
// vendor's members at the message's path prefix at ("messages.N.") from the
// message m and its blocks tb.
func ReplayThinking(body []byte, own string, give func(out []byte, at string, m, tb gjson.Result) ([]byte, error)) ([]byte, error) {
	out := body
	var err error
	for i, m := range gjson.GetBytes(body, "messages").Array() {
		tb := m.Get("thinking_blocks")
		if !tb.Exists() {
			continue
		}
		at := "messages." + strconv.Itoa(i) + "."
		if out, err = sjson.DeleteBytes(out, at+"thinking_blocks"); err != nil {
			return nil, err
		}
		if m.Get(own).Exists() {
			continue
		}
		if out, err = give(out, at, m, tb); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxRewrittenAnswer bounds a JSON answer read to rewrite it (the gateway's
// own bound on an answer).
const maxRewrittenAnswer = 64 << 20

// RewriteChat gives a 2xx OpenAI Chat answer to the gateway rewritten by a
// module's executor: a JSON answer through answer (read whole on the first
// Read, within the gateway's own read and its deadlines; its length is
// then unknown), a stream's "data:" lines through chunk (each line passed on
// as soon as it is complete, other lines as they are). A nil func leaves
// that kind as it is. Executors put their vendor's reasoning members into
// the Chat pivot's form with it.
func RewriteChat(resp *http.Response, stream bool, answer, chunk func([]byte) []byte) *http.Response {
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return resp
	case stream && chunk != nil:
		resp.Body = &chunkReader{body: resp.Body, chunk: chunk}
	case !stream && answer != nil:
		resp.Body = &answerReader{body: resp.Body, answer: answer}
	default:
		return resp
	}
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	return resp
}

// answerReader serves a JSON answer rewritten whole.
type answerReader struct {
	body   io.ReadCloser
	answer func([]byte) []byte
	out    *bytes.Reader
	err    error
}

func (a *answerReader) Read(p []byte) (int, error) {
	if a.out == nil {
		raw, err := io.ReadAll(io.LimitReader(a.body, maxRewrittenAnswer))
		a.err = err
		a.out = bytes.NewReader(a.answer(raw))
	}
	n, err := a.out.Read(p)
	if err == io.EOF && a.err != nil {
		return n, a.err
	}
	return n, err
}

func (a *answerReader) Close() error { return a.body.Close() }

// chunkReader passes an SSE stream through line by line, each "data:"
// line's data rewritten.
type chunkReader struct {
	body  io.ReadCloser
	chunk func([]byte) []byte
	in    []byte // the incomplete line read so far
	out   []byte // what is ready for the caller
	off   int
	buf   []byte
	err   error
}

func (s *chunkReader) Read(p []byte) (int, error) {
	for s.off == len(s.out) {
		if s.err != nil {
			return 0, s.err
		}
		s.out, s.off = s.out[:0], 0
		if s.buf == nil {
			s.buf = make([]byte, 16<<10)
		}
		n, err := s.body.Read(s.buf)
		s.in = append(s.in, s.buf[:n]...)
		start := 0
		for {
			i := bytes.IndexByte(s.in[start:], '\n')
			if i < 0 {
				break
			}
			s.out = s.appendLine(s.out, s.in[start:start+i+1])
			start += i + 1
		}
		s.in = append(s.in[:0], s.in[start:]...)
		if err != nil {
			s.out = s.appendLine(s.out, s.in) // a last line without its newline
			s.in = s.in[:0]
			s.err = err
		}
	}
	n := copy(p, s.out[s.off:])
	s.off += n
	return n, nil
}

func (s *chunkReader) Close() error { return s.body.Close() }

// sseData starts an SSE data line.
var sseData = []byte("data:")

// appendLine appends line (its line end included), a data line's data
// rewritten.
func (s *chunkReader) appendLine(dst, line []byte) []byte {
	if !bytes.HasPrefix(line, sseData) {
		return append(dst, line...)
	}
	body := bytes.TrimRight(line[len(sseData):], "\r\n")
	end := line[len(sseData)+len(body):]
	data := bytes.TrimLeft(body, " ")
	dst = append(dst, line[:len(line)-len(end)-len(data)]...)
	dst = append(dst, s.chunk(data)...)
	return append(dst, end...)
}
