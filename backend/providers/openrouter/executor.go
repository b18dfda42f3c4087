package openrouter

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"omniroute/backend/providers"
	"omniroute/backend/providers/openai"
)

// Dialect is OpenRouter's Chat Completions: the OpenAI wire, whose answers
// carry reasoning_details (details.go) that the executor also gives the
// gateway's Chat pivot as thinking_blocks.
const Dialect providers.Dialect = "openrouter"

// maxAnswer bounds a JSON answer read to rewrite it.
const maxAnswer = 64 << 20

// Executor sends calls as the OpenAI executor does and reads the
// reasoning_details of a chat answer (JSON or stream) into the pivot's
// thinking_blocks and reasoning_content (Answer, Chunk); everything else
// passes as it is.
type Executor struct {
	wire providers.Executor
}

// NewExecutor is the module's executor over the wiring place's client.
func NewExecutor(d providers.ExecDeps) providers.Executor {
	return &Executor{wire: openai.New(d.Client, d.UserAgent)}
}

// Do implements providers.Executor.
func (e *Executor) Do(ctx context.Context, t *providers.Target, c providers.Call) (*http.Response, error) {
	resp, err := e.wire.Do(ctx, t, c)
	if err != nil || c.Path != "" || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	if c.Stream {
		resp.Body = &streamReader{body: resp.Body}
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		return resp, nil
	}
	// The rewritten answer's length is known only once it is read.
	resp.Body = &answerReader{body: resp.Body}
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	return resp, nil
}

// answerReader reads the whole JSON answer on the first Read (within the
// gateway's own read, its deadlines applying) and serves it in the pivot's
// form (Answer).
type answerReader struct {
	body io.ReadCloser
	out  *bytes.Reader
	err  error
}

func (a *answerReader) Read(p []byte) (int, error) {
	if a.out == nil {
		raw, err := io.ReadAll(io.LimitReader(a.body, maxAnswer))
		if err != nil {
			a.err = err
		}
		a.out = bytes.NewReader(Answer(raw))
	}
	n, err := a.out.Read(p)
	if err == io.EOF && a.err != nil {
		return n, a.err
	}
	return n, err
}

func (a *answerReader) Close() error { return a.body.Close() }

// streamReader passes an SSE stream through line by line, each "data:"
// line holding reasoning_details rewritten in the pivot's form (Chunk). A
// line is passed on as soon as it is complete.
type streamReader struct {
	body io.ReadCloser
	in   []byte // the incomplete line read so far
	out  []byte // what is ready for the caller
	off  int
	buf  []byte
	err  error
}

func (s *streamReader) Read(p []byte) (int, error) {
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
			s.out = appendLine(s.out, s.in[start:start+i+1])
			start += i + 1
		}
		s.in = append(s.in[:0], s.in[start:]...)
		if err != nil {
			s.out = appendLine(s.out, s.in) // a last line without its newline
			s.in = s.in[:0]
			s.err = err
		}
	}
	n := copy(p, s.out[s.off:])
	s.off += n
	return n, nil
}

func (s *streamReader) Close() error { return s.body.Close() }

// dataPrefix starts an SSE data line.
var dataPrefix = []byte("data:")

// appendLine appends line (its newline included), a data line with
// reasoning_details in the pivot's form.
func appendLine(dst, line []byte) []byte {
	if !bytes.HasPrefix(line, dataPrefix) || !bytes.Contains(line, []byte(keyDetails)) {
		return append(dst, line...)
	}
	body := bytes.TrimRight(line[len(dataPrefix):], "\r\n")
	end := line[len(dataPrefix)+len(body):]
	data := bytes.TrimLeft(body, " ")
	dst = append(dst, line[:len(line)-len(end)-len(data)]...)
	dst = append(dst, Chunk(data)...)
	return append(dst, end...)
}
