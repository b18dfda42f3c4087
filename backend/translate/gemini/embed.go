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

// EmbedRequestToOpenAI turns a Gemini client's embedding request into an
// OpenAI embeddings request {model, input: []string, dimensions?}: one
// input per request of a batchEmbedContents body ({requests:[{content, …}]}),
// or the one content of an embedContent body (one true). A content's text
// parts are joined by a newline; a part without text is refused, and so are
// requests asking for different outputDimensionality. taskType and title
// have no OpenAI equivalent and are dropped.
func EmbedRequestToOpenAI(body []byte, model string, one bool) ([]byte, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return nil, err
	}
	var items []gjson.Result
	if one {
		items = []gjson.Result{root}
	} else {
		reqs := root.Get("requests")
		if !reqs.IsArray() || len(reqs.Array()) == 0 {
			return nil, inputErr("requests", "must be a non-empty array of EmbedContentRequest objects")
		}
		items = reqs.Array()
	}
	out := []byte(`{"model":`)
	out = translate.AppendJSONString(out, trimModelsPrefix(model))
	out = append(out, `,"input":[`...)
	dims := int64(0)
	for i, it := range items {
		field := "content"
		if !one {
			field = "requests." + strconv.Itoa(i) + ".content"
		}
		parts := it.Get("content.parts")
		if !it.IsObject() || !parts.IsArray() || len(parts.Array()) == 0 {
			return nil, inputErr(field, "must be a Content with parts")
		}
		var text []byte
		for j, p := range parts.Array() {
			t := p.Get("text")
			if t.Type != gjson.String {
				return nil, inputErr(field, "holds a part without text: embeddings take text parts only")
			}
			if j > 0 {
				text = append(text, '\n')
			}
			text = append(text, t.Str...)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = translate.AppendJSONString(out, string(text))
		if d := it.Get("outputDimensionality"); d.Exists() {
			if d.Type != gjson.Number || d.Num < 1 || d.Num != math.Trunc(d.Num) {
				return nil, inputErr("outputDimensionality", "must be a positive integer")
			}
			if dims != 0 && int64(d.Num) != dims {
				return nil, inputErr("outputDimensionality", "must be the same in every request of a batch")
			}
			dims = int64(d.Num)
		}
	}
	out = append(out, ']')
	if dims > 0 {
		out = append(out, `,"dimensions":`...)
		out = strconv.AppendInt(out, dims, 10)
	}
	return append(out, '}'), nil
}

// EmbedAnswerFromOpenAI turns an OpenAI embeddings answer into a Gemini
// client's: {embeddings:[{values}]} for batchEmbedContents, {embedding:
// {values}} for embedContent (one), in the order of the inputs, with
// usageMetadata.promptTokenCount the answer's prompt_tokens (Google's
// answer has no count; the gateway's log reads it there).
func EmbedAnswerFromOpenAI(body []byte, one bool) ([]byte, error) {
	root, err := parseObject(body, "the embeddings answer")
	if err != nil {
		return nil, err
	}
	data := root.Get("data")
	if !data.IsArray() {
		return nil, errors.New("the embeddings answer has no data")
	}
	vecs := make([]string, len(data.Array()))
	for i, d := range data.Array() {
		idx := i
		if n := d.Get("index"); n.Type == gjson.Number && int(n.Num) >= 0 && int(n.Num) < len(vecs) {
			idx = int(n.Num)
		}
		e := d.Get("embedding")
		if !e.IsArray() {
			return nil, errors.New("an embedding is not a float array")
		}
		vecs[idx] = e.Raw
	}
	return embedAnswer(vecs, one, root.Get("usage.prompt_tokens").Int())
}

// EmbedAnswerFromGemini reshapes a batchEmbedContents answer for a Gemini
// client: as it is for a batch, its one embedding for embedContent; usage is
// promptTokens (the local estimate: Gemini reports none).
func EmbedAnswerFromGemini(body []byte, one bool, promptTokens int) ([]byte, error) {
	root, err := parseObject(body, "the Gemini answer")
	if err != nil {
		return nil, err
	}
	embs := root.Get("embeddings")
	if !embs.IsArray() {
		return nil, errors.New("the Gemini answer has no embeddings")
	}
	var vecs []string
	for _, e := range embs.Array() {
		v := e.Get("values")
		if !v.IsArray() {
			return nil, errors.New("a Gemini embedding has no values")
		}
		vecs = append(vecs, v.Raw)
	}
	return embedAnswer(vecs, one, int64(promptTokens))
}

func embedAnswer(vecs []string, one bool, promptTokens int64) ([]byte, error) {
	if one && len(vecs) != 1 {
		return nil, errors.New("the embeddings answer does not hold exactly one embedding")
	}
	var out []byte
	if one {
		out = append(out, `{"embedding":{"values":`...)
		out = append(out, vecs[0]...)
		out = append(out, '}')
	} else {
		out = append(out, `{"embeddings":[`...)
		for i, v := range vecs {
			if v == "" {
				return nil, errors.New("the embeddings answer misses an input's embedding")
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"values":`...)
			out = append(out, v...)
			out = append(out, '}')
		}
		out = append(out, ']')
	}
	out = append(out, `,"usageMetadata":{"promptTokenCount":`...)
	out = strconv.AppendInt(out, promptTokens, 10)
	out = append(out, `,"totalTokenCount":`...)
	out = strconv.AppendInt(out, promptTokens, 10)
	return append(out, `}}`...), nil
}
