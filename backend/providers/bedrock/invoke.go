package bedrock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"omniroute/backend/translate"
	tanthropic "omniroute/backend/translate/anthropic"
	"omniroute/backend/translate/sse"
)

// Anthropic models through InvokeModel: Converse has no field for extended
// thinking and does not continue a trailing assistant message (prefill), so
// an Anthropic model's request that uses either goes to InvokeModel /
// InvokeModelWithResponseStream with the Anthropic Messages body Bedrock
// takes ({"anthropic_version": "bedrock-2023-05-31", …} without "model" and
// "stream"), and the answer (a Messages JSON, or event-stream "chunk"
// messages whose payload {"bytes": <base64>} is one Messages stream event)
// is translated back to the OpenAI wire.

// AnthropicVersion is the anthropic_version Bedrock's Messages body carries.
const AnthropicVersion = "bedrock-2023-05-31"

// IsAnthropic reports whether a Bedrock model id (or inference profile,
// "us.anthropic.…") is an Anthropic model.
func IsAnthropic(model string) bool { return strings.Contains(model, "anthropic.") }

// NeedsInvoke reports whether a Chat request to model needs InvokeModel:
// an Anthropic model asked to think (reasoning_effort other than none, an
// OpenRouter-style reasoning object) or to continue a trailing assistant
// message.
func NeedsInvoke(model string, chat []byte) bool {
	if !IsAnthropic(model) {
		return false
	}
	root := gjson.ParseBytes(chat)
	if e := root.Get("reasoning_effort").String(); e != "" && e != "none" {
		return true
	}
	if r := root.Get("reasoning"); r.IsObject() && r.Get("enabled").Type != gjson.False {
		return true
	}
	msgs := root.Get("messages").Array()
	return len(msgs) > 0 && msgs[len(msgs)-1].Get("role").String() == "assistant" && len(msgs[len(msgs)-1].Get("tool_calls").Array()) == 0
}

// ToInvoke turns a Chat request into Bedrock's Anthropic Messages body.
func ToInvoke(chat []byte) ([]byte, error) {
	body, err := tanthropic.RequestFromChat(chat)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	for _, k := range []string{"model", "stream"} {
		if body, err = sjson.DeleteBytes(body, k); err != nil {
			return nil, err
		}
	}
	return sjson.SetBytes(body, "anthropic_version", AnthropicVersion)
}

// FromInvoke turns an InvokeModel answer (a Messages JSON) into a chat.completion.
func FromInvoke(raw []byte) ([]byte, error) {
	return tanthropic.ResponseToChat(raw)
}

// invokeReader turns an InvokeModelWithResponseStream body into an OpenAI
// Chat Completions SSE stream: each "chunk" message's payload is one
// Anthropic stream event, translated as an Anthropic upstream's would be.
// A corrupt or truncated frame, or a stream that ends before message_stop,
// is a read error, never a clean end.
type invokeReader struct {
	body io.ReadCloser
	dec  *Decoder
	tr   translate.StreamTranslator
	out  []byte
	off  int
	done bool
	err  error
}

// NewInvokeReader translates body (application/vnd.amazon.eventstream) for model.
func NewInvokeReader(body io.ReadCloser, model string) io.ReadCloser {
	return &invokeReader{body: body, dec: NewDecoder(body), tr: tanthropic.NewStreamToChat(model)}
}

func (s *invokeReader) Close() error { return s.body.Close() }

func (s *invokeReader) Read(p []byte) (int, error) {
	for s.off >= len(s.out) {
		if s.err != nil {
			return 0, s.err
		}
		if s.done {
			return 0, io.EOF
		}
		s.out, s.off = s.out[:0], 0
		s.step()
	}
	n := copy(p, s.out[s.off:])
	s.off += n
	return n, nil
}

// errNoStop is an InvokeModel stream that ended before message_stop.
var errNoStop = errors.New("bedrock invoke stream: ended before message_stop")

func (s *invokeReader) step() {
	m, err := s.dec.Next()
	if err == io.EOF {
		s.out = s.tr.End(s.out)
		if !s.tr.Complete() {
			s.err = errNoStop
			return
		}
		s.done = true
		return
	}
	if err != nil {
		s.err = fmt.Errorf("bedrock stream: %w", err)
		return
	}
	if t := m.Headers[":message-type"]; t == "exception" || t == "error" {
		code := m.Headers[":exception-type"]
		if code == "" {
			code = m.Headers[":error-code"]
		}
		msg := gjson.GetBytes(m.Payload, "message").String()
		if msg == "" {
			msg = m.Headers[":error-message"]
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": exceptionName(code), "message": msg, "type": exceptionName(code)}})
		s.out = sse.Append(s.out, "", b)
		s.done = true
		return
	}
	if m.Headers[":event-type"] != "chunk" {
		return // no Chat form
	}
	data, err := base64.StdEncoding.DecodeString(gjson.GetBytes(m.Payload, "bytes").String())
	if err != nil || !gjson.ValidBytes(data) {
		s.err = errors.New("bedrock invoke stream: a chunk is not a base64 JSON event")
		return
	}
	ev := sse.Event{Event: gjson.GetBytes(data, "type").String(), Data: bytes.Clone(data)}
	if s.out, err = s.tr.Event(s.out, ev); err != nil {
		s.err = err
	}
}
