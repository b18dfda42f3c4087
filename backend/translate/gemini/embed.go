package gemini

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"omniroute/backend/translate"
)

// EmbedRequestFromOpenAI turns an OpenAI embeddings request {model, input:
// string | []string, dimensions?} into the body of Gemini's
// POST models/{model}:batchEmbedContents: one request per input, each naming
// "models/{model}" (model is the target's, as the URL's) with the text as its
// one part and dimensions as outputDimensionality. encoding_format is the
// answer's business (EmbeddingsToOpenAI); user is dropped (Gemini has none).
func EmbedRequestFromOpenAI(body []byte, model string) ([]byte, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return nil, err
	}
	var texts []string
	in := root.Get("input")
	switch {
	case in.Type == gjson.String:
		texts = append(texts, in.Str)
	case in.IsArray():
		var bad error
		in.ForEach(func(_, v gjson.Result) bool {
			if v.Type != gjson.String {
				bad = inputErr("input", "token arrays cannot be sent to a Gemini embedding model (text parts only); send strings")
				return false
			}
			texts = append(texts, v.Str)
			return true
		})
		if bad != nil {
			return nil, bad
		}
		if len(texts) == 0 {
			return nil, inputErr("input", "must not be empty")
		}
	default:
		return nil, inputErr("input", "must be a string or an array of strings")
	}
	dims := root.Get("dimensions")
	if dims.Exists() && (dims.Type != gjson.Number || dims.Num < 1 || dims.Num != math.Trunc(dims.Num)) {
		return nil, inputErr("dimensions", "must be a positive integer")
	}
	name := "models/" + trimModelsPrefix(model)
	out := make([]byte, 0, len(body)+len(texts)*(len(name)+64))
	out = append(out, `{"requests":[`...)
	for i, t := range texts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"model":`...)
		out = translate.AppendJSONString(out, name)
		out = append(out, `,"content":{"parts":[{"text":`...)
		out = translate.AppendJSONString(out, t)
		out = append(out, `}]}`...)
		if dims.Exists() {
			out = append(out, `,"outputDimensionality":`...)
			out = strconv.AppendInt(out, int64(dims.Num), 10)
		}
		out = append(out, '}')
	}
	return append(out, `]}`...), nil
}

func trimModelsPrefix(m string) string {
	if len(m) > 7 && m[:7] == "models/" {
		return m[7:]
	}
	return m
}

// EmbeddingsToOpenAI turns Gemini's batchEmbedContents answer
// {embeddings:[{values:[…]}]} into OpenAI's embeddings answer for model.
// Vectors are float arrays, or with base64 the float32 little-endian bytes
// in base64 (OpenAI's encoding_format "base64"). Gemini reports no tokens
// for embeddings: usage is EstimateEmbedTokens of the client's request.
func EmbeddingsToOpenAI(body []byte, model string, b64 bool, promptTokens int) ([]byte, error) {
	root, err := parseObject(body, "the Gemini answer")
	if err != nil {
		return nil, err
	}
	embs := root.Get("embeddings")
	if !embs.IsArray() {
		return nil, errors.New("the Gemini answer has no embeddings")
	}
	out := make([]byte, 0, len(body)+128)
	out = append(out, `{"object":"list","data":[`...)
	var bad error
	i := 0
	embs.ForEach(func(_, e gjson.Result) bool {
		vals := e.Get("values")
		if !vals.IsArray() {
			bad = errors.New("a Gemini embedding has no values")
			return false
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"object":"embedding","index":`...)
		out = strconv.AppendInt(out, int64(i), 10)
		out = append(out, `,"embedding":`...)
		if b64 {
			var raw []byte
			vals.ForEach(func(_, v gjson.Result) bool {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(v.Num)))
				return true
			})
			out = append(out, '"')
			out = base64.StdEncoding.AppendEncode(out, raw)
			out = append(out, '"')
		} else {
			out = append(out, '[')
			n := 0
			vals.ForEach(func(_, v gjson.Result) bool {
				if v.Type != gjson.Number {
					bad = errors.New("a Gemini embedding value is not a number")
					return false
				}
				if n > 0 {
					out = append(out, ',')
				}
				out = append(out, v.Raw...)
				n++
				return true
			})
			out = append(out, ']')
		}
		out = append(out, '}')
		i++
		return bad == nil
	})
	if bad != nil {
		return nil, bad
	}
	out = append(out, `],"model":`...)
	out = translate.AppendJSONString(out, model)
	out = append(out, `,"usage":{"prompt_tokens":`...)
	out = strconv.AppendInt(out, int64(promptTokens), 10)
	out = append(out, `,"total_tokens":`...)
	out = strconv.AppendInt(out, int64(promptTokens), 10)
	return append(out, `}}`...), nil
}

// EstimateEmbedTokens estimates the tokens of an OpenAI embeddings request's
// text inputs as CountTokens does: one per four characters (rounded up) of
// each input. Gemini's embedding answers carry no count.
func EstimateEmbedTokens(body []byte) int {
	n := 0
	add := func(s string) { n += (utf8.RuneCountInString(s) + charsPerToken - 1) / charsPerToken }
	in := gjson.GetBytes(body, "input")
	if in.Type == gjson.String {
		add(in.Str)
		return n
	}
	in.ForEach(func(_, v gjson.Result) bool {
		add(v.String())
		return true
	})
	return n
}
