package gateway

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"omniroute/backend/resilience/verdict"
	"omniroute/backend/routing"
)

// minSecretLen is the shortest credential redacted by value (shorter ones
// would blank ordinary words).
const minSecretLen = 4

// redactSecret removes the connection's own credential from s by value, in
// the spellings an upstream may echo it (as sent, and URL-encoded): pattern
// matching alone misses keys of an unknown shape.
func redactSecret(s, secret string) string {
	if len(secret) < minSecretLen || s == "" {
		return s
	}
	s = strings.ReplaceAll(s, secret, "[redacted]")
	if q := url.QueryEscape(secret); q != secret {
		s = strings.ReplaceAll(s, q, "[redacted]")
	}
	return s
}

// redacted is v with the candidate's credential removed from its message: the
// message reaches the client, lastError (DB), the event bus and the logs.
func redacted(v verdict.Verdict, cand routing.Candidate) verdict.Verdict {
	v.Message = redactSecret(v.Message, cand.Conn.Target("").Secret)
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
// candidate's credential removed, cut on a rune boundary.
func attemptDetail(msg string, cand routing.Candidate) string {
	msg = redactSecret(msg, cand.Conn.Target("").Secret)
	if len(msg) > maxAttemptDetail {
		cut := maxAttemptDetail
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	return msg
}
