package providers

import "strings"

// dataPrefix begins the path of a providerSpecificData field in an error.
const dataPrefix = "providerSpecificData."

// UserWords is a schema refusal's message in a user's words: each
// "providerSpecificData.<name>" it names becomes that field's form label
// ("Access key ID must be …", where the server's wording says
// "providerSpecificData.accessKeyId must be …"), and an entry of a map field
// ("providerSpecificData.deployments[\"gpt-4o\"]") its label and the entry's
// key. A name the schema does not have is left as it is. The error's param
// keeps the field's path and its code stays: only the sentence changes.
func (s *DataSchema) UserWords(msg string) string {
	if s == nil || !strings.Contains(msg, dataPrefix) {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, dataPrefix)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i])
		rest := msg[i+len(dataPrefix):]
		n := 0
		for n < len(rest) && isNameByte(rest[n]) {
			n++
		}
		label, ok := s.label(rest[:n])
		if !ok {
			b.WriteString(msg[i : i+len(dataPrefix)+n])
			msg = rest[n:]
			continue
		}
		b.WriteString(label)
		rest = rest[n:]
		if strings.HasPrefix(rest, "[") {
			if end := strings.IndexByte(rest, ']'); end > 0 {
				b.WriteString(" " + rest[1:end]) // the entry's key, as the message quoted it
				rest = rest[end+1:]
			}
		}
		msg = rest
	}
}

// label is the form label of the field named name ("" names none).
func (s *DataSchema) label(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	for _, f := range s.Fields {
		if f.Name == name {
			if f.Label == "" {
				return f.Name, true
			}
			return f.Label, true
		}
	}
	return "", false
}

// isNameByte reports whether c may be part of a field name.
func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
