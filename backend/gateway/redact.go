package gateway

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"omniroute/backend/redact"
	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// knownSecrets are the credentials of an attempt the gateway knows by value:
// the candidate connection's (its key or token; an AWS-signed connection's AWS
// secret key and session token) and the client's own (its gateway key, or the
// management credential of a playground request). They are removed by value
// from anything an upstream says before credential shapes are: a shape stops
// at the first character it does not expect and would leave the key's tail.
func knownSecrets(r *http.Request, cand routing.Candidate) []string {
	out := clientSecrets(r)
	if cand.Conn != nil {
		t := cand.Conn.Target("")
		out = append(out, t.Secret, t.AWS.SecretAccessKey, t.AWS.SessionToken)
	}
	return out
}

// clientSecrets are the credentials the client sent with r: Authorization
// (a bearer's token, else the whole value), x-api-key, x-goog-api-key and a
// Gemini ?key=.
func clientSecrets(r *http.Request) []string {
	if r == nil {
		return nil
	}
	var out []string
	if v := strings.TrimSpace(r.Header.Get("Authorization")); v != "" {
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			v = strings.TrimSpace(v[7:])
		}
		out = append(out, v)
	}
	for _, h := range [...]string{"X-Api-Key", "X-Goog-Api-Key"} {
		if v := r.Header.Get(h); v != "" {
			out = append(out, v)
		}
	}
	if r.URL != nil && strings.Contains(r.URL.RawQuery, "key=") {
		if v := r.URL.Query().Get("key"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// scrubbed is an upstream's bytes without the known secrets (by value, every
// spelling), for the classifier to read.
func scrubbed(b []byte, secrets []string) []byte {
	if len(b) == 0 {
		return b
	}
	s := redact.Known(string(b), secrets)
	if len(s) == len(b) && s == string(b) {
		return b
	}
	return []byte(s)
}

// redacted is v with the attempt's known credentials removed from its
// message: the message reaches the client, lastError (DB), the event bus and
// the logs.
func redacted(v verdict.Verdict, r *http.Request, cand routing.Candidate) verdict.Verdict {
	v.Message = redact.Known(v.Message, knownSecrets(r, cand))
	return v
}

// redirectMessage explains a 3xx: the gateway never follows an upstream
// redirect, since the request carries the connection's credential and the
// redirect may point anywhere.
func redirectMessage(status int) string {
	return "the upstream answered a redirect (" + itoa(status) + "), which the gateway never follows " +
		"(it would send the connection's credential elsewhere); check the connection's base URL"
}

// maxAttemptDetail bounds an attempt's detail in the request log, in bytes.
const maxAttemptDetail = 512

// attemptDetail is a failed attempt's detail for the request log: the
// verdict's message (the upstream's or the transport's own text) with the
// attempt's known credentials removed, cut on a rune boundary.
func attemptDetail(msg string, r *http.Request, cand routing.Candidate) string {
	msg = redact.Known(msg, knownSecrets(r, cand))
	if len(msg) > maxAttemptDetail {
		cut := maxAttemptDetail
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	return msg
}
