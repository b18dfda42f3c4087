package connfields

import (
	"strings"
	"unicode"
)

// placeholderKey reports whether v (trimmed) is a documentation placeholder
// rather than a key: an ellipsis alone ("…", "..."), a short prefix cut by an
// ellipsis ("sk-…", "sk-ant-..."), a name in angle brackets, braces or an
// unexpanded shell variable ("<key>", "{{API_KEY}}", "$OPENAI_API_KEY"), or
// the words of one ("YOUR_API_KEY", "your-key-here", "changeme"). No
// provider issues such a key, and storing one fails every request later,
// far from the mistake.
func placeholderKey(v string) bool {
	if v == "" {
		return false
	}
	for _, cut := range []string{"…", "..."} {
		if prefix, ok := strings.CutSuffix(v, cut); ok && len(strings.Trim(prefix, ".… ")) <= 8 {
			return true
		}
	}
	// A short name in brackets, never a JSON document (a cloud service
	// account's key file is an object).
	bracketed := strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">") || strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") ||
		strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]")
	if bracketed && len(v) <= 64 && !strings.ContainsAny(v, "\":,") || strings.HasPrefix(v, "$") && len(v) <= 64 {
		return true
	}
	if strings.IndexFunc(v, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' && r != '_' && r != ' ' }) >= 0 {
		return false // digits or other marks: a real key's shape
	}
	words := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, v)
	switch strings.TrimSuffix(strings.TrimPrefix(words, "your"), "here") {
	case "apikey", "key", "token", "secret", "changeme", "placeholder", "insertkey", "insertapikey", "openaiapikey", "anthropicapikey", "geminiapikey":
		return true
	}
	return false
}
