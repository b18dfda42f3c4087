package gemini

import (
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Token estimate constants for CountTokens.
const (
	charsPerToken   = 4
	tokensPerImage  = 258 // Gemini's count for an image up to 384 px a side (and each 768 px tile)
	tokensPerTurn   = 4   // role and framing per content
	tokensPerTool   = 8   // framing per function declaration
	tokensBaselineG = 3
)

// countRequest returns the generateContent request inside a countTokens body:
// {"generateContentRequest": {...}} or the body itself ({"contents": [...]},
// the short form, or a whole generateContent body).
func countRequest(root gjson.Result) gjson.Result {
	if g := pick(root, "generateContentRequest", "generate_content_request"); g.IsObject() {
		return g
	}
	return root
}

// CountTokens returns a local estimate of the prompt tokens of a countTokens
// (or generateContent) request, for :countTokens when the model is served by
// an upstream that cannot count: about one token per four characters of
// system, content and function-declaration text, 258 per inline or file
// media part, and a few tokens of framing per content and declaration. It is
// an estimate, not Gemini's tokenizer.
func CountTokens(body []byte) (int, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return 0, err
	}
	req := countRequest(root)
	var c counter
	if sys := pick(req, "systemInstruction", "system_instruction"); sys.Exists() {
		c.parts(sys.Get("parts"))
	}
	contents := req.Get("contents")
	if contents.Exists() && contents.Type != gjson.Null && !contents.IsArray() {
		return 0, inputErr("contents", "must be an array")
	}
	each(contents, func(_ int, m gjson.Result) bool {
		c.tokens += tokensPerTurn
		c.parts(m.Get("parts"))
		return true
	})
	each(req.Get("tools"), func(_ int, t gjson.Result) bool {
		each(pick(t, "functionDeclarations", "function_declarations"), func(_ int, d gjson.Result) bool {
			c.tokens += tokensPerTool
			c.text(d.Get("name").String())
			c.text(d.Get("description").String())
			if s := pick(d, "parameters", "parametersJsonSchema", "parameters_json_schema"); s.Exists() {
				c.text(s.Raw)
			}
			return true
		})
		return true
	})
	n := c.tokens + (c.chars+charsPerToken-1)/charsPerToken
	if n > 0 {
		n += tokensBaselineG
	}
	return n, nil
}

type counter struct{ chars, tokens int }

func (c *counter) text(s string) { c.chars += utf8.RuneCountInString(s) }

func (c *counter) parts(arr gjson.Result) {
	each(arr, func(_ int, p gjson.Result) bool {
		switch {
		case p.Get("text").Type == gjson.String:
			c.text(p.Get("text").Str)
		case pick(p, "functionCall", "function_call").Exists():
			fc := pick(p, "functionCall", "function_call")
			c.text(fc.Get("name").String())
			c.text(fc.Get("args").Raw)
		case pick(p, "functionResponse", "function_response").Exists():
			fr := pick(p, "functionResponse", "function_response")
			c.text(fr.Get("name").String())
			c.text(fr.Get("response").Raw)
		case pick(p, "inlineData", "inline_data", "fileData", "file_data").Exists():
			c.tokens += tokensPerImage
		}
		return true
	})
}

// CountTokensResponse is the :countTokens answer for a total: {"totalTokens":N}.
func CountTokensResponse(total int) []byte {
	b := appendInt([]byte(`{"totalTokens":`), total)
	return append(b, '}')
}

// CountRequestFromGenerate wraps a generateContent body (as RequestFromChat
// makes) into the countTokens body for model: {"generateContentRequest":
// {"model":"models/<model>", …}}, so a Gemini upstream counts the prompt with
// its system instruction and tools.
func CountRequestFromGenerate(body []byte, model string) ([]byte, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return nil, err
	}
	name := model
	if !strings.HasPrefix(name, "models/") {
		name = "models/" + name
	}
	out := []byte(`{"generateContentRequest":{"model":`)
	out = appendString(out, name)
	root.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "model" {
			return true
		}
		out = append(out, ',')
		out = appendString(out, k.Str)
		out = append(out, ':')
		out = append(out, compactRaw(v.Raw)...)
		return true
	})
	return append(out, `}}`...), nil
}

// ParseCountTokens reads totalTokens from a Gemini :countTokens answer.
func ParseCountTokens(body []byte) (int, error) {
	root, err := parseObject(body, "the upstream response")
	if err != nil {
		return 0, err
	}
	t := pick(root, "totalTokens", "total_tokens")
	if t.Type != gjson.Number && t.Type != gjson.String {
		return 0, inputErr("totalTokens", "is missing")
	}
	return nonNeg(t), nil
}
