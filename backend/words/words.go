// Package words is the one catalogue of plain words: for every error code,
// attempt verdict, exclusion reason and health state the gateway shows, the
// sentence a user understands. The API serves it (GET /api/words) and the
// dashboard shows these sentences everywhere, with the code beside them as a
// small tag for searching; the tray reads the same labels.
package words

import "strings"

// State is how a health state reads: a short label for badges and a sentence.
type State struct {
	Label    string `json:"label"`
	Sentence string `json:"sentence"`
}

// Catalogue is what GET /api/words serves.
type Catalogue struct {
	// Codes maps an error code (UPSTREAM_RATE_LIMITED), an attempt verdict
	// kind (rate_limit) or an exclusion reason (circuit_open) to its sentence.
	Codes map[string]string `json:"codes"`
	// States maps a health state (serving, cooling, key_rejected, …) and an
	// overall status (healthy, degraded, …) to its label and sentence.
	States map[string]State `json:"states"`
	// Fixes maps a fix (reset_breaker, …) to its button label.
	Fixes map[string]string `json:"fixes"`
}

var codes = map[string]string{
	// Upstream verdicts (the error codes clients and Logs see).
	"UPSTREAM_RATE_LIMITED":        "The provider is limiting how fast this account may send requests.",
	"UPSTREAM_CONCURRENCY_LIMITED": "The provider refused because this account has too many requests running at once.",
	"UPSTREAM_QUOTA_EXHAUSTED":     "This account has used up its quota for now.",
	"UPSTREAM_QUOTA_RESTATED":      "The provider said again that the quota is used up.",
	"UPSTREAM_AUTH_FAILED":         "The provider did not accept the credentials.",
	"UPSTREAM_AUTH":                "The provider did not accept the credentials.",
	"UPSTREAM_FORBIDDEN":           "The provider refused access to this model or feature.",
	"UPSTREAM_REQUEST_REJECTED":    "The provider refused this request.",
	"UPSTREAM_BAD_REQUEST":         "The provider said the request was invalid.",
	"UPSTREAM_SERVER_ERROR":        "The provider had an internal error.",
	"UPSTREAM_TRANSPORT_ERROR":     "The provider could not be reached, or the connection broke.",
	"UPSTREAM_TIMEOUT":             "The provider did not start answering in time.",
	"UPSTREAM_BAD_RESPONSE":        "The provider's answer could not be read.",
	"UPSTREAM_BAD_STATUS":          "The provider answered with an unexpected status.",
	"UPSTREAM_REDIRECT":            "The provider answered with a redirect; check the connection's address.",
	"UPSTREAM_STREAM_ERROR":        "The provider reported an error in the middle of its answer.",
	"UPSTREAM_TOOL_COUNT_LIMIT":    "The model refuses this many tools in one request.",
	"CONTEXT_LENGTH_EXCEEDED":      "The conversation is too long for this model.",
	"CONTENT_POLICY_VIOLATION":     "The provider's safety filter refused this request.",
	"CREDITS_EXHAUSTED":            "The account has no credits left.",
	"ACCOUNT_BANNED":               "The provider suspended this account.",
	"KEY_REJECTED":                 "The provider rejected this key.",
	"OAUTH_REFRESH_FAILED":         "The subscription's login could not be renewed.",
	"STREAM_STALLED":               "The answer stopped arriving.",
	"STREAM_TRUNCATED":             "The answer was cut off before it ended.",
	"EMPTY_RESPONSE":               "The provider answered with nothing.",
	"CLIENT_CANCELED":              "The client gave up before the answer was complete.",
	"CLIENT_CANCELLED":             "The client gave up before the answer was complete.",
	"FORMAT_NOT_SUPPORTED":         "This connection cannot answer this kind of request.",
	"UNTRANSLATABLE_REQUEST":       "The request uses something this connection's format cannot express.",
	// Gateway answers.
	"ALL_ATTEMPTS_FAILED":          "Every connection that could serve the model failed.",
	"ALL_TARGETS_SKIPPED":          "No connection could take the request now (all were out of service).",
	"ALL_ACCOUNTS_RATE_LIMITED":    "Every account for this model is rate limited right now.",
	"NO_FREE_ELIGIBLE_CONNECTION":  "No connection for this model is free right now.",
	"MODEL_NOT_FOUND":              "No connection serves a model by this name.",
	"MODEL_NOT_ALLOWED":            "This client key may not use this model.",
	"INVALID_EXPIRY":               "The expiry must be a date and time in the future (or none); to stop a key now, delete it.",
	"INVALID_GRACE":                "The grace period for the old secret must be between none and 7 days.",
	"KEY_EXPIRED":                  "This API key has expired: set a later expiry or rotate it on the API Keys page.",
	"KEY_ROTATED":                  "This API key was rotated and this secret no longer works: use the new secret.",
	"MODEL_PRICE_UNKNOWN":          "This key has a spending budget in dollars and this model has no price: set the model's price on its connection, or allow models of unknown price on the key.",
	"KEY_BUDGET_EXCEEDED":          "This key has reached its budget for the period (what it spent plus what its requests in flight hold).",
	"MODEL_REQUIRED":               "The request did not name a model.",
	"QUOTA_EXHAUSTED":              "The quota for this model is used up on every account.",
	"RATE_LIMITED":                 "Too many requests: wait a moment.",
	"GATEWAY_SATURATED":            "The gateway is handling as many requests as it can.",
	"GATEWAY_PAUSED":               "The gateway is paused: requests are refused until you resume it.",
	"WAITING_FOR_CAPACITY":         "Waiting for a connection to become free.",
	"LEASE_CAPACITY_UNAVAILABLE":   "Another key holds this connection exclusively.",
	"RATE_LIMIT_QUEUE_FULL":        "Too many requests are already waiting.",
	"RATE_LIMIT_QUEUE_TIMEOUT":     "The request waited too long in the queue.",
	"RATE_LIMIT_EXECUTION_TIMEOUT": "The request took longer than allowed.",
	"SEMAPHORE_QUEUE_FULL":         "Too many requests are already waiting for this connection.",
	"SEMAPHORE_TIMEOUT":            "The request waited too long for a free slot on this connection.",
	"API_KEY_INVALID":              "The client key is not valid.",
	"INVALID_REQUEST":              "The request is not valid.",
	"INVALID_JSON":                 "The request body is not valid JSON.",
	"INTERNAL_ERROR":               "Something went wrong inside the gateway.",
	"AGENT_MODEL_UNSERVABLE":       "Every connection serving this model is unreachable or has its key rejected.",
	"AGENT_MODEL_NOT_SERVED":       "No connection serves this model.",
	// People: the Users and Tokens pages, the management API's refusals.
	"MANAGEMENT_AUTH_REQUIRED": "The gateway did not accept this management credential: it is wrong, revoked or its session ended.",
	"ROLE_FORBIDDEN":           "Your role may not do this: ask an admin.",
	"INVALID_NAME":             "The name must be 1 to 100 characters.",
	"INVALID_ROLE":             "The role must be admin, operator or viewer.",
	"TOKEN_NOT_FOUND":          "This token no longer exists: it was already revoked.",
	"USER_NOT_FOUND":           "This user no longer exists.",
	// Attempt verdict kinds (attempts[].verdict).
	"success":           "Answered.",
	"rate_limit":        "Rate limited by the provider.",
	"concurrency_limit": "Too many requests at once for this account.",
	"quota":             "Quota used up.",
	"auth":              "Credentials not accepted.",
	"forbidden":         "Access refused.",
	"request_rejected":  "Request refused by the provider.",
	"banned":            "Account suspended.",
	"credits_exhausted": "No credits left.",
	"not_found":         "The provider does not know this model or address.",
	"bad_request":       "The provider said the request was invalid.",
	"context_length":    "Too long for the model.",
	"content_policy":    "Refused by the safety filter.",
	"server":            "The provider had an error.",
	"transport":         "Could not reach the provider, or the connection broke.",
	"timeout":           "No answer in time.",
	"stall":             "The answer stopped arriving.",
	"client_canceled":   "The client gave up.",
	"excluded":          "Not tried.",
	"wait":              "Waited for a cooldown to end.",
	// Exclusion reasons (attempts[].code of an excluded step, Why?).
	"circuit_open":             "Its provider had too many failures in a row and is paused for a while.",
	"connection_cooldown":      "The connection is resting after errors.",
	"model_cooldown":           "This model is resting on this connection after errors.",
	"model_lockout":            "This model is locked on this connection after errors.",
	"provider_cooldown":        "Its provider is resting after repeated failures.",
	"unavailable":              "The connection is out of service until its credentials are fixed or a Test passes.",
	"connection_failed":        "The connection already failed for this request.",
	"lease_held":               "Another key holds this connection exclusively.",
	"tool_limit":               "The model refuses this many tools.",
	"cooldown_wait":            "Waited for a cooldown to end.",
	"all_targets_cooling_down": "Every connection for this model is resting after errors.",
}

var states = map[string]State{
	"serving":            {"Healthy", "Takes requests."},
	"degraded":           {"Degraded", "Takes requests, but its provider has had recent failures."},
	"leased":             {"Leased", "Another client key holds this connection exclusively; it serves only that key."},
	"models_locked":      {"Models locked", "Some of its models are resting after errors; the others serve."},
	"cooling":            {"Cooling down", "Resting after errors; it comes back by itself."},
	"breaker_open":       {"Breaker open", "Its provider failed too often and is paused for a while; it comes back by itself."},
	"key_rejected":       {"Key rejected", "The provider rejected this key. Enter a new key."},
	"endpoint_not_found": {"Wrong base URL", "This URL answers 404: check the base URL (often a missing /v1)."},
	"unreachable":        {"Unreachable", "Nothing answers at this connection's address. Check the address and your network."},
	"terminal":           {"Out of service", "Out of service until its credentials are fixed or a Test passes (suspended, expired or out of credits)."},
	"disabled":           {"Disabled", "You switched this connection off."},
	"dead":               {"Dead", "None of its models can be served now."},
	"setup":              {"Set up", "No provider connection yet."},
	"disk_full":          {"Disk full", "The disk holding the database is full: requests are still routed, but nothing new can be saved. Free some space on that disk."},
	// Overall statuses.
	"healthy":   {"Healthy", "Every connection serves."},
	"unhealthy": {"Unhealthy", "No configured model can be served now."},
	"paused":    {"Paused", "Paused: clients get 503 until you resume."},
}

var fixes = map[string]string{
	"reset_breaker":   "Reset breaker",
	"clear_cooldown":  "Clear cooldown",
	"unlock_models":   "Unlock models",
	"release_lease":   "Release",
	"replace_key":     "Replace key",
	"enable":          "Enable",
	"edit_connection": "Edit connection",
	"set_price":       "Set its price",
}

// Get returns the catalogue (a fresh copy: callers may not change the source).
func Get() Catalogue {
	c := Catalogue{Codes: make(map[string]string, len(codes)+len(apiCodes)), States: make(map[string]State, len(states)), Fixes: make(map[string]string, len(fixes))}
	for k, v := range apiCodes {
		c.Codes[k] = v
	}
	for k, v := range codes {
		c.Codes[k] = v
	}
	for k, v := range states {
		c.States[k] = v
	}
	for k, v := range fixes {
		c.Fixes[k] = v
	}
	return c
}

// Sentence is code's sentence; for an unknown code, the code in words
// ("SOME_NEW_CODE" → "Some new code.") so nothing reads as raw jargon.
func Sentence(code string) string {
	if s, ok := codes[code]; ok {
		return s
	}
	if s, ok := apiCodes[code]; ok {
		return s
	}
	if code == "" {
		return ""
	}
	w := strings.ToLower(strings.ReplaceAll(code, "_", " "))
	return strings.ToUpper(w[:1]) + w[1:] + "."
}

// Label is a health state's short label; an unknown state in words.
func Label(state string) string {
	if s, ok := states[state]; ok {
		return s.Label
	}
	if state == "" {
		return ""
	}
	w := strings.ReplaceAll(state, "_", " ")
	return strings.ToUpper(w[:1]) + w[1:]
}
