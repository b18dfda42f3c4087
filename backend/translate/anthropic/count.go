package anthropic

import (
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Token estimate constants for CountTokens.
const (
	charsPerToken  = 4
	tokensPerImage = 1600 // Anthropic's cost of a full-size image (about 1.15 megapixels)
	tokensPerMsg   = 4    // role and framing per message
	tokensPerTool  = 8    // framing per tool definition
	tokensBaseline = 3    // framing of the whole request
)

// CountTokens returns a local estimate of the input tokens of an Anthropic
// Messages request, for /v1/messages/count_tokens ({"input_tokens": N}) when
// the upstream cannot count. It is an estimate, not a tokenizer: about one
// token per four characters of system text, message text (text, thinking,
// tool inputs and results) and tool definitions (name, description, schema),
// plus 1600 per image or PDF and a few tokens of framing per message and tool.
// It errors only on bodies that are not a JSON object or whose messages,
// system or tools have the wrong shape.
func CountTokens(body []byte) (int, error) {
	root, err := parseObject(body, "the request body")
	if err != nil {
		return 0, err
	}
	var c counter
	sys := root.Get("system")
	switch {
	case sys.Type == gjson.String:
		c.text(sys.Str)
	case sys.IsArray():
		c.blocks(sys)
	case sys.Type != gjson.Null:
		return 0, inputErr("system", "must be a string or an array of text blocks")
	}
	msgs := root.Get("messages")
	if msgs.Exists() && msgs.Type != gjson.Null && !msgs.IsArray() {
		return 0, inputErr("messages", "must be an array")
	}
	each(msgs, func(_ int, m gjson.Result) bool {
		c.tokens += tokensPerMsg
		content := m.Get("content")
		if content.Type == gjson.String {
			c.text(content.Str)
		} else {
			c.blocks(content)
		}
		return true
	})
	tools := root.Get("tools")
	if tools.Exists() && tools.Type != gjson.Null && !tools.IsArray() {
		return 0, inputErr("tools", "must be an array")
	}
	each(tools, func(_ int, t gjson.Result) bool {
		c.tokens += tokensPerTool
		c.text(t.Get("name").String())
		c.text(t.Get("description").String())
		if s := t.Get("input_schema"); s.Exists() {
			c.text(s.Raw)
		}
		return true
	})
	n := c.tokens + (c.chars+charsPerToken-1)/charsPerToken
	if n > 0 {
		n += tokensBaseline
	}
	return n, nil
}

type counter struct {
	chars, tokens int
}

func (c *counter) text(s string) { c.chars += utf8.RuneCountInString(s) }

// blocks counts an array of content blocks (recursing into tool results).
func (c *counter) blocks(arr gjson.Result) {
	each(arr, func(_ int, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "text":
			c.text(b.Get("text").String())
		case "thinking":
			c.text(b.Get("thinking").String())
		case "tool_use":
			c.text(b.Get("name").String())
			c.text(b.Get("input").Raw)
		case "tool_result":
			content := b.Get("content")
			if content.Type == gjson.String {
				c.text(content.Str)
			} else {
				c.blocks(content)
			}
		case "image":
			c.tokens += tokensPerImage
		case "document":
			if src := b.Get("source"); src.Get("type").String() == "text" {
				c.text(src.Get("data").String())
			} else {
				c.tokens += tokensPerImage
			}
		}
		return true
	})
}
