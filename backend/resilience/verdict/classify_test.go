package verdict

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testNow is the fixed observation time of every table row.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// hdr builds a canonical header from key/value pairs.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// tick turns § into a backtick so bodies with backticks stay raw strings.
func tick(s string) []byte { return []byte(strings.ReplaceAll(s, "§", "`")) }

// Expected routing flags per row, spelled out so every row asserts all of them.
type flags struct {
	kind                       Kind
	scope                      Scope
	failover, breaker, skip    bool
	cool                       bool
	terminal                   string
	retry, fixed               time.Duration
	source                     string
	msgContains, msgNotContain string
}

// Shorthands for the recurring flag sets (kind-specific values still per row).
func rateLimit() flags {
	return flags{kind: KindRateLimit, scope: ScopeModel, failover: true, skip: true}
}

// accountRateLimit is a 429 with account-wide evidence: the connection cools.
func accountRateLimit() flags {
	return flags{kind: KindRateLimit, scope: ScopeConnection, failover: true, skip: true, cool: true}
}
func quota() flags {
	return flags{kind: KindQuota, scope: ScopeQuotaFamily, failover: true, skip: true, cool: true}
}
func concurrency() flags {
	return flags{kind: KindConcurrencyLimit, scope: ScopeConnection, failover: true, skip: true, cool: true, fixed: time.Second}
}
func auth() flags {
	return flags{kind: KindAuth, scope: ScopeConnection, failover: true, skip: true, cool: true}
}
func banned() flags {
	return flags{kind: KindBanned, scope: ScopeConnection, failover: true, skip: true, cool: true, terminal: TerminalBanned}
}
func credits() flags {
	return flags{kind: KindCreditsExhausted, scope: ScopeConnection, failover: true, skip: true, cool: true, terminal: TerminalCreditsExhausted}
}
func forbidden() flags {
	return flags{kind: KindForbidden, scope: ScopeQuotaFamily, failover: true, skip: true, cool: true}
}
func rejected() flags {
	return flags{kind: KindRequestRejected, scope: ScopeConnection, failover: true, skip: true, cool: true}
}
func notFound() flags { return flags{kind: KindNotFound, scope: ScopeModel, failover: true} }
func badRequest() flags {
	return flags{kind: KindBadRequest}
}
func contextLen() flags    { return flags{kind: KindContextLength} }
func contentPolicy() flags { return flags{kind: KindContentPolicy} }
func server() flags {
	return flags{kind: KindServer, scope: ScopeExact, failover: true, breaker: true}
}
func transport() flags {
	return flags{kind: KindTransport, scope: ScopeExact, failover: true, breaker: true}
}
func timeout() flags {
	return flags{kind: KindTimeout, scope: ScopeExact, failover: true, breaker: true}
}

func (f flags) withRetry(d time.Duration, src string) flags {
	f.retry, f.source = d, src
	if f.kind == KindConcurrencyLimit {
		f.fixed = d
	}
	return f
}
func (f flags) msg(contains string) flags { f.msgContains = contains; return f }
func (f flags) noMsg(s string) flags      { f.msgNotContain = s; return f }

// kindCodes is the independent expectation for Verdict.Code.
var kindCodes = map[Kind]string{
	KindRateLimit: "UPSTREAM_RATE_LIMITED", KindConcurrencyLimit: "UPSTREAM_CONCURRENCY_LIMITED",
	KindQuota: "UPSTREAM_QUOTA_EXHAUSTED", KindAuth: "UPSTREAM_AUTH_FAILED",
	KindForbidden: "UPSTREAM_FORBIDDEN", KindRequestRejected: "UPSTREAM_REQUEST_REJECTED",
	KindBanned: "ACCOUNT_BANNED", KindCreditsExhausted: "CREDITS_EXHAUSTED",
	KindNotFound: "MODEL_NOT_FOUND", KindBadRequest: "UPSTREAM_BAD_REQUEST",
	KindContextLength: "CONTEXT_LENGTH_EXCEEDED", KindContentPolicy: "CONTENT_POLICY_VIOLATION",
	KindServer: "UPSTREAM_SERVER_ERROR", KindTransport: "UPSTREAM_TRANSPORT_ERROR",
	KindTimeout: "UPSTREAM_TIMEOUT", KindStall: "STREAM_STALLED", KindClientCanceled: "CLIENT_CANCELED",
	KindSuccess: "",
}

type classifyCase struct {
	name string
	o    Outcome
	want flags
}

func resp(provider string, status int, h http.Header, body []byte) Outcome {
	return Outcome{Provider: provider, Status: status, Header: h, Body: body, Now: testNow}
}

func failed(provider string, err error) Outcome {
	return Outcome{Provider: provider, Err: err, Now: testNow}
}

func classifyCases() []classifyCase {
	rfc := func(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339) }
	epoch := func(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).Unix(), 10) }
	anthropicRL := func(extra ...string) http.Header {
		return hdr(append([]string{
			"anthropic-ratelimit-requests-limit", "50",
			"anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", rfc(25 * time.Second),
			"anthropic-ratelimit-tokens-limit", "40000",
			"anthropic-ratelimit-tokens-remaining", "0",
			"anthropic-ratelimit-tokens-reset", rfc(40 * time.Second),
			"request-id", "req_011CQ5xYz",
			"content-type", "application/json",
		}, extra...)...)
	}
	openaiRL := func(reqReset, tokReset string) http.Header {
		return hdr(
			"x-ratelimit-limit-requests", "500",
			"x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", reqReset,
			"x-ratelimit-limit-tokens", "30000",
			"x-ratelimit-remaining-tokens", "29850",
			"x-ratelimit-reset-tokens", tokReset,
			"x-request-id", "req_7f2a1c0e9b",
			"content-type", "application/json",
		)
	}
	const geminiQuota429 = `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10\nPlease retry in 37.410297849s.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "quotaDimensions": {"location": "global", "model": "gemini-2.5-pro"},
            "quotaValue": "10"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]
      },
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "37s"
      }
    ]
  }
}`
	html502 := "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
	cf522 := `<!DOCTYPE html><html lang="en-US"><head><title>api.example.com | 522: Connection timed out</title></head><body><div id="cf-error-details"><h1>Connection timed out</h1><span>Error code 522</span></div></body></html>`

	return []classifyCase{
		// ---------------- OpenAI ----------------
		{"openai/429 insufficient_quota", resp("openai", 429, hdr("x-request-id", "req_1", "content-type", "application/json"),
			[]byte(`{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)),
			quota().msg("You exceeded your current quota")},
		{"openai/429 rate_limit_exceeded RPM with x-ratelimit headers", resp("openai", 429, openaiRL("120ms", "95ms"),
			[]byte(`{"error":{"message":"Rate limit reached for gpt-4o in organization org-Xk3lQ on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms. Visit https://platform.openai.com/account/rate-limits to learn more. You can increase your rate limit by adding a payment method to your account at https://platform.openai.com/account/billing.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)),
			rateLimit().withRetry(120*time.Millisecond, HintResetRequests)},
		{"openai/429 TPM larger token reset wins", resp("openai", 429, openaiRL("20ms", "1.2s"),
			[]byte(`{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-Xk3lQ on tokens per min (TPM): Limit 200000, Used 199500, Requested 1200. Please try again in 210ms. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`)),
			rateLimit().withRetry(1200*time.Millisecond, HintResetTokens)},
		{"openai/429 RPD is a daily quota with body hint", resp("openai", 429, hdr("content-type", "application/json"),
			[]byte(`{"error":{"message":"Rate limit reached for gpt-4o in organization org-Xk3lQ on requests per day (RPD): Limit 200, Used 200, Requested 1. Please try again in 7m12s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)),
			quota().withRetry(7*time.Minute+12*time.Second, HintBody)},
		{"openai/400 context_length_exceeded", resp("openai", 400, nil,
			[]byte(`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)),
			contextLen().msg("maximum context length is 128000")},
		{"azure-openai/400 content_filter", resp("azure", 400, nil,
			[]byte(`{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}`)),
			contentPolicy()},
		{"openai/400 invalid_prompt flagged", resp("openai", 400, nil,
			[]byte(`{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting","type":"invalid_request_error","param":null,"code":"invalid_prompt"}}`)),
			contentPolicy()},
		{"openai/401 invalid_api_key (key redacted)", resp("openai", 401, hdr("www-authenticate", `Bearer realm="OpenAI API"`),
			[]byte(`{"error":{"message":"Incorrect API key provided: sk-proj-AbC1********************************************xYz9. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)),
			auth().msg("Incorrect API key provided: [redacted]. You can find").noMsg("sk-proj")},
		{"openai/401 account_deactivated", resp("openai", 401, nil,
			[]byte(`{"error":{"message":"Your OpenAI account has been deactivated, please check your email for more information. If you feel this is an error, contact us through our help center at help.openai.com.","type":"invalid_request_error","param":null,"code":"account_deactivated"}}`)),
			banned()},
		{"openai/403 unsupported_country_region_territory", resp("openai", 403, nil,
			[]byte(`{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not supported","param":null,"type":"request_forbidden"}}`)),
			forbidden()},
		{"openai/404 model_not_found", resp("openai", 404, nil,
			tick(`{"error":{"message":"The model §gpt-5-turbo-preview§ does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`)),
			notFound().msg("does not exist")},
		{"openai/500 server_error", resp("openai", 500, nil,
			[]byte(`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`)),
			server()},
		{"openai/503 overloaded ignores window headers", resp("openai", 503, openaiRL("8.64s", "6m0s"),
			[]byte(`{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`)),
			server()},
		{"openai/503 with retry-after", resp("openai", 503, hdr("retry-after", "4"),
			[]byte(`{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}`)),
			server().withRetry(4*time.Second, HintRetryAfter)},

		// ---------------- Anthropic ----------------
		{"anthropic/429 rate_limit_error with retry-after", resp("anthropic", 429, anthropicRL("retry-after", "17"),
			[]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (8c5e4a1f-0000-4000-8000-000000000000) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase."},"request_id":"req_011CQ5xYz"}`)),
			rateLimit().withRetry(17*time.Second, HintRetryAfter)},
		{"anthropic/429 without retry-after uses ratelimit reset headers", resp("anthropic", 429, anthropicRL(),
			[]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (8c5e4a1f) of 40,000 input tokens per minute."}}`)),
			rateLimit().withRetry(40*time.Second, HintAnthropicReset)},
		{"anthropic/429 oauth unified reset epoch", resp("claude-code", 429, hdr(
			"anthropic-ratelimit-unified-status", "rejected",
			"anthropic-ratelimit-unified-reset", epoch(2*time.Hour),
			"anthropic-ratelimit-unified-representative-claim", "five_hour"),
			[]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}`)),
			accountRateLimit().withRetry(2*time.Hour, HintAnthropicReset)},
		{"anthropic/529 overloaded_error ignores unified reset", resp("anthropic", 529, hdr(
			"anthropic-ratelimit-unified-reset", epoch(3*time.Hour), "x-should-retry", "true"),
			[]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CQ6"}`)),
			server().msg("Overloaded")},
		{"anthropic/401 authentication_error invalid x-api-key", resp("anthropic", 401, nil,
			[]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CQ7"}`)),
			auth().msg("invalid x-api-key")},
		{"anthropic/401 oauth token expired", resp("claude-code", 401, nil,
			[]byte(`{"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired. Please obtain a new token or refresh your existing token."},"request_id":"req_011CQ8"}`)),
			auth()},
		{"anthropic/403 permission_error Request not allowed", resp("claude-code", 403, nil,
			[]byte(`{"type":"error","error":{"type":"permission_error","message":"Request not allowed"},"request_id":"req_011CQ9"}`)),
			rejected()},
		{"anthropic/400 prompt is too long", resp("anthropic", 400, nil,
			[]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215633 tokens > 200000 maximum"},"request_id":"req_011CQA"}`)),
			contextLen()},
		{"anthropic/400 credit balance too low", resp("anthropic", 400, nil,
			[]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},"request_id":"req_011CQB"}`)),
			credits()},
		{"anthropic/400 organization disabled", resp("anthropic", 400, nil,
			[]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"This organization has been disabled."},"request_id":"req_011CQC"}`)),
			banned()},
		{"anthropic/413 request_too_large", resp("anthropic", 413, nil,
			[]byte(`{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`)),
			contextLen()},
		{"anthropic/500 api_error", resp("anthropic", 500, nil,
			[]byte(`{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CQD"}`)),
			server()},

		// ---------------- Gemini / Vertex ----------------
		{"gemini/429 RESOURCE_EXHAUSTED quota with RetryInfo", resp("gemini", 429, hdr("content-type", "application/json; charset=UTF-8"), []byte(geminiQuota429)),
			quota().withRetry(37*time.Second, HintGoogleRPCRetryInfo)},
		{"vertex/429 RESOURCE_EXHAUSTED stream array without quota wording", resp("vertex", 429, nil,
			[]byte(`[{"error":{"code":429,"message":"Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.","status":"RESOURCE_EXHAUSTED"}}]`)),
			rateLimit().msg("Resource exhausted")},
		{"gemini/403 PERMISSION_DENIED", resp("gemini", 403, nil,
			[]byte(`{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}`)),
			forbidden()},
		{"gemini/403 CONSUMER_SUSPENDED (key redacted)", resp("gemini", 403, nil,
			[]byte(`{"error":{"code":403,"message":"Permission denied: Consumer 'api_key:AIzaSyD-EXAMPLEexample1234567890abcd' has been suspended.","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"CONSUMER_SUSPENDED","domain":"googleapis.com"}]}}`)),
			banned().noMsg("AIza")},
		{"gemini/404 NOT_FOUND", resp("gemini", 404, nil,
			[]byte(`{"error":{"code":404,"message":"models/gemini-9.0-pro is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.","status":"NOT_FOUND"}}`)),
			notFound()},
		{"gemini/400 INVALID_ARGUMENT", resp("gemini", 400, nil,
			[]byte(`{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"foo\" at 'generation_config': Cannot find field.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"generation_config","description":"Invalid JSON payload received. Unknown name \"foo\" at 'generation_config': Cannot find field."}]}]}}`)),
			badRequest()},
		{"gemini/400 API_KEY_INVALID", resp("gemini", 400, nil,
			[]byte(`{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`)),
			auth()},
		{"gemini/400 input token count", resp("gemini", 400, nil,
			[]byte(`{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`)),
			contextLen()},
		{"gemini/503 UNAVAILABLE", resp("gemini", 503, nil,
			[]byte(`{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)),
			server()},
		{"gemini/500 INTERNAL", resp("gemini", 500, nil,
			[]byte(`{"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}}`)),
			server()},

		// ---------------- GLM / Zhipu ----------------
		{"glm/429 1302 并发数过高", resp("glm", 429, nil,
			[]byte(`{"error":{"code":"1302","message":"您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}`)),
			concurrency()},
		{"glm/429 1302 with retry-after", resp("glm", 429, hdr("retry-after", "3"),
			[]byte(`{"error":{"code":"1302","message":"您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}`)),
			concurrency().withRetry(3*time.Second, HintRetryAfter)},
		{"glm/429 1113 余额不足", resp("glm", 429, nil,
			[]byte(`{"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}`)),
			quota()},
		{"glm/429 1305 访问量过大", resp("glm", 429, nil,
			[]byte(`{"error":{"code":"1305","message":"该模型当前访问量过大，请您稍后再试"}}`)),
			rateLimit()},
		{"glm/429 1308 coding plan usage cap", resp("glm", 429, nil,
			[]byte(`{"error":{"code":"1308","message":"已达到 5 小时的使用上限。您的限额将在 2025-06-01 15:00:00 重置。"}}`)),
			quota()},
		{"glm/400 1261 prompt too long", resp("glm", 400, nil,
			[]byte(`{"error":{"code":"1261","message":"Prompt exceeds max length"}}`)),
			contextLen()},
		{"glm/500 1113 restated quota", resp("glm", 500, nil,
			[]byte(`{"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}`)),
			quota()},

		// ---------------- agentrouter / new-api relays ----------------
		{"agentrouter/401 invalid token", resp("agentrouter", 401, nil,
			[]byte(`{"error":{"message":"无效的令牌 (request id: 20250601120000123456789abcdef)","type":"new_api_error","param":"","code":""}}`)),
			auth()},
		{"agentrouter/429 upstream saturated", resp("agentrouter", 429, nil,
			[]byte(`{"error":{"message":"当前分组上游负载已饱和，请稍后再试 (request id: 2025060112000098765)","type":"new_api_error","param":"","code":null}}`)),
			rateLimit()},
		{"new-api/403 user banned", resp("agentrouter", 403, nil,
			[]byte(`{"error":{"message":"用户已被封禁 (request id: 2025060112000011111)","type":"new_api_error","param":"","code":null}}`)),
			banned()},
		{"new-api/500 restated rate limit", resp("agentrouter", 500, nil,
			[]byte(`{"error":{"message":"upstream error: Rate limit exceeded, please retry after 30 seconds (request id: 2025060112000022222)","type":"new_api_error","param":"","code":"rate_limit_exceeded"}}`)),
			rateLimit().withRetry(30*time.Second, HintBody)},

		// ---------------- OpenRouter ----------------
		{"openrouter/402 requires more credits", resp("openrouter", 402, nil,
			[]byte(`{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford 4037. To increase, visit https://openrouter.ai/settings/credits and upgrade to a paid account","code":402,"metadata":{"provider_name":null}},"user_id":"user_2abc"}`)),
			credits()},
		{"openrouter/429 free-models-per-day", resp("openrouter", 429, hdr("x-ratelimit-limit", "50", "x-ratelimit-remaining", "0", "x-ratelimit-reset", "1748822400000"),
			[]byte(`{"error":{"message":"Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1748822400000"},"provider_name":null}},"user_id":"user_2abc"}`)),
			quota()},
		{"openrouter/429 upstream provider rate limit", resp("openrouter", 429, nil,
			[]byte(`{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream. Please retry shortly, or add your own key to accumulate your rate limits: https://openrouter.ai/settings/integrations","provider_name":"Google AI Studio"}},"user_id":"user_2abc"}`)),
			rateLimit().msg("Provider returned error")},
		{"openrouter/401 no auth credentials", resp("openrouter", 401, nil,
			[]byte(`{"error":{"message":"No auth credentials found","code":401}}`)),
			auth()},
		{"openrouter/403 moderation flagged", resp("openrouter", 403, nil,
			[]byte(`{"error":{"code":403,"message":"gpt-4o requires moderation on OpenAI. Your input was flagged for \"harassment\". No credits were charged.","metadata":{"reasons":["harassment"],"flagged_input":"...","provider_name":"OpenAI","model_slug":"openai/gpt-4o"}},"user_id":"user_2abc"}`)),
			contentPolicy()},
		{"openrouter/502 provider returned error", resp("openrouter", 502, nil,
			[]byte(`{"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"{\"error\":\"upstream connect error\"}","provider_name":"Chutes"}},"user_id":"user_2abc"}`)),
			server()},

		// ---------------- DeepSeek / Groq ----------------
		{"deepseek/402 Insufficient Balance", resp("deepseek", 402, nil,
			[]byte(`{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}`)),
			credits().msg("Insufficient Balance")},
		{"deepseek/422 invalid parameters", resp("deepseek", 422, nil,
			tick(`{"error":{"message":"Failed to deserialize the JSON body into the target type: messages[0]: missing field §content§","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`)),
			badRequest()},
		{"groq/429 with retry-after and reset headers", resp("groq", 429, hdr(
			"retry-after", "2",
			"x-ratelimit-limit-requests", "14400", "x-ratelimit-remaining-requests", "14370",
			"x-ratelimit-reset-requests", "2m59.56s",
			"x-ratelimit-limit-tokens", "6000", "x-ratelimit-remaining-tokens", "0",
			"x-ratelimit-reset-tokens", "7.66s"),
			tick(`{"error":{"message":"Rate limit reached for model §llama-3.3-70b-versatile§ in organization §org_01jabc§ service tier §on_demand§ on tokens per minute (TPM): Limit 6000, Used 5800, Requested 412. Please try again in 2.12s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}`)),
			rateLimit().withRetry(2*time.Second, HintRetryAfter)},
		{"groq/429 retry-after HTTP date", resp("groq", 429, hdr("retry-after", testNow.Add(90*time.Second).Format(http.TimeFormat)),
			[]byte(`{"error":{"message":"Too Many Requests","type":"requests","code":"rate_limit_exceeded"}}`)),
			rateLimit().withRetry(90*time.Second, HintRetryAfter)},
		{"azure/429 retry-after-ms", resp("azure", 429, hdr("retry-after-ms", "1500", "x-ms-region", "eastus"),
			[]byte(`{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded call rate limit of your current OpenAI S0 pricing tier."}}`)),
			rateLimit().withRetry(1500*time.Millisecond, HintRetryAfterMs)},

		// ---------------- generic / precedence ----------------
		{"nginx/502 html", resp("custom", 502, hdr("content-type", "text/html"), []byte(html502)),
			server().noMsg("<")},
		{"cloudflare/522 html", resp("custom", 522, hdr("content-type", "text/html; charset=UTF-8", "cf-ray", "8f1c2d3e4f5a6b7c-FRA"), []byte(cf522)),
			server()},
		{"generic/500 empty body", resp("custom", 500, nil, nil), server()},
		{"envoy/504 plain text", resp("custom", 504, hdr("content-type", "text/plain"), []byte("upstream request timeout")),
			server().msg("upstream request timeout")},
		{"generic/408", resp("custom", 408, nil, []byte(`{"error":{"message":"Request timed out"}}`)), server()},
		{"generic/501 does not count for breaker", resp("custom", 501, nil, []byte(`{"error":"Not Implemented"}`)),
			flags{kind: KindServer, scope: ScopeExact, failover: true}},
		{"generic/429 no body", resp("custom", 429, nil, nil), rateLimit()},
		{"generic/429 X-RateLimit-Scope account", resp("custom", 429, hdr("x-ratelimit-scope", "account", "retry-after", "3"), nil),
			accountRateLimit().withRetry(3*time.Second, HintRetryAfter)},
		{"generic/429 X-RateLimit-Scope model stays model", resp("custom", 429, hdr("x-ratelimit-scope", "model"), nil), rateLimit()},
		{"generic/429 body names the subscription", resp("custom", 429, nil,
			[]byte(`{"error":{"message":"Your subscription's request limit was reached for all models."}}`)), accountRateLimit()},
		{"generic/429 concurrency", resp("custom", 429, nil,
			[]byte(`{"error":{"message":"Too many concurrent requests for this API key. Please wait for a request to finish.","type":"rate_limit_error"}}`)),
			concurrency()},
		{"precedence/429 concurrency and quota: quota wins", resp("custom", 429, nil,
			[]byte(`{"error":{"message":"Concurrency limit reached, and your monthly quota is exhausted. Please upgrade your plan.","type":"rate_limit_error"}}`)),
			quota()},
		{"precedence/400 RESOURCE_EXHAUSTED quota", resp("custom", 400, nil,
			[]byte(`{"error":{"code":400,"message":"Quota exceeded for quota metric 'Generate Content API requests per minute'","status":"RESOURCE_EXHAUSTED"}}`)),
			quota()},
		{"precedence/400 banned words is not an account ban", resp("custom", 400, nil,
			[]byte(`{"error":{"message":"Your message contains banned words and was flagged by moderation.","type":"invalid_request_error"}}`)),
			contentPolicy()},
		{"generic/200 success", resp("openai", 200, nil, []byte(`{"id":"chatcmpl-1"}`)),
			flags{kind: KindSuccess}},

		// ---------------- transport ----------------
		{"transport/connection reset", failed("openai", &url.Error{Op: "Post", URL: "https://api.openai.com/v1/chat/completions",
			Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}),
			transport().msg("connection reset")},
		{"transport/connection refused", failed("ollama", &url.Error{Op: "Post", URL: "http://127.0.0.1:11434/api/chat",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}),
			transport()},
		{"transport/unexpected EOF (key in URL redacted)", failed("gemini", &url.Error{Op: "Post",
			URL: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent?key=AIzaSyD-EXAMPLEexample1234567890abcd", Err: io.ErrUnexpectedEOF}),
			transport().noMsg("AIza")},
		{"transport/EOF", failed("openai", fmt.Errorf("read response: %w", io.EOF)), transport()},
		{"transport/dns not found", failed("openai", &net.DNSError{Err: "no such host", Name: "api.openai.invalid", IsNotFound: true}),
			transport()},
		{"timeout/dns timeout", failed("openai", &net.DNSError{Err: "i/o timeout", Name: "api.openai.com", IsTimeout: true}),
			timeout()},
		{"timeout/deadline exceeded", failed("anthropic", &url.Error{Op: "Post", URL: "https://api.anthropic.com/v1/messages", Err: context.DeadlineExceeded}),
			timeout()},
		{"timeout/net read deadline", failed("anthropic", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}),
			timeout()},
		{"canceled/client went away", failed("openai", fmt.Errorf("attempt: %w", context.Canceled)),
			flags{kind: KindClientCanceled, skip: true}},
		{"stall/no content for 60s", Outcome{Provider: "openai", Status: 200, Err: fmt.Errorf("sse idle 60s: %w", ErrStall), Now: testNow},
			flags{kind: KindStall, scope: ScopeExact, failover: true}},
	}
}

func TestClassifyTable(t *testing.T) {
	cases := classifyCases()
	if len(cases) < 45 {
		t.Fatalf("table has %d rows, want at least 45", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.o)
			w := tc.want
			check := func(field string, g, e any) {
				t.Helper()
				if g != e {
					t.Errorf("%s = %v, want %v (verdict %+v)", field, g, e, got)
				}
			}
			check("Kind", got.Kind, w.kind)
			check("Scope", got.Scope, w.scope)
			check("Failover", got.Failover, w.failover)
			check("CountsForBreaker", got.CountsForBreaker, w.breaker)
			check("SkipProviderBreaker", got.SkipProviderBreaker, w.skip)
			check("CoolConnection", got.CoolConnection, w.cool)
			check("Terminal", got.Terminal, w.terminal)
			check("RetryAfter", got.RetryAfter, w.retry)
			check("HintSource", got.HintSource, w.source)
			check("FixedCooldown", got.FixedCooldown, w.fixed)
			check("Code", got.Code, kindCodes[w.kind])
			check("Status", got.Status, tc.o.Status)
			check("OK", got.OK(), w.kind == KindSuccess)
			if w.kind != KindSuccess && got.Message == "" {
				t.Errorf("empty Message")
			}
			if w.msgContains != "" && !strings.Contains(got.Message, w.msgContains) {
				t.Errorf("Message %q does not contain %q", got.Message, w.msgContains)
			}
			if w.msgNotContain != "" && strings.Contains(got.Message, w.msgNotContain) {
				t.Errorf("Message %q contains %q", got.Message, w.msgNotContain)
			}
			if got.CountsForBreaker && got.SkipProviderBreaker {
				t.Errorf("CountsForBreaker and SkipProviderBreaker both set")
			}
			if again := Classify(tc.o); again != got {
				t.Errorf("Classify is not deterministic: %+v then %+v", got, again)
			}
		})
	}
}

// Account-level statuses must never count for the provider breaker.
func TestAccountLevelNeverCountsForBreaker(t *testing.T) {
	for _, tc := range classifyCases() {
		switch tc.o.Status {
		case 401, 402, 403, 404, 429, 400, 413, 422:
			if v := Classify(tc.o); v.CountsForBreaker {
				t.Errorf("%s: status %d counts for breaker", tc.name, tc.o.Status)
			}
		}
	}
}

func TestProviderStatusesCountForBreaker(t *testing.T) {
	for _, s := range []int{408, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529} {
		v := Classify(Outcome{Status: s, Now: testNow})
		if v.Kind != KindServer || !v.CountsForBreaker || v.CoolConnection || !v.Failover || v.Scope != ScopeExact {
			t.Errorf("status %d: %+v", s, v)
		}
	}
	if v := Classify(Outcome{Now: testNow}); v.Kind != KindTransport || !v.CountsForBreaker {
		t.Errorf("status 0 without error: %+v", v)
	}
	for _, s := range []int{301, 404, 501, 505, 507} {
		if v := Classify(Outcome{Status: s, Now: testNow}); v.CountsForBreaker {
			t.Errorf("status %d counts for breaker: %+v", s, v)
		}
	}
}

func TestClassifyMessageSanitised(t *testing.T) {
	secrets := []string{
		"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
		"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
		"AIzaSyD-EXAMPLEexample1234567890abcd",
	}
	for _, s := range secrets {
		body := []byte(`{"error":{"message":"bad credential ` + s + ` supplied"}}`)
		v := Classify(Outcome{Status: 401, Body: body, Now: testNow})
		if strings.Contains(v.Message, s) || strings.Contains(v.Message, s[:8]) {
			t.Errorf("secret leaked: %q", v.Message)
		}
	}
	long := strings.Repeat("é", 1000)
	v := Classify(Outcome{Status: 500, Body: []byte(`{"message":"` + long + `"}`), Now: testNow})
	_, upstream, _ := strings.Cut(v.Message, ": ")
	if n := len([]rune(upstream)); n != maxUpstreamMessage+1 { // 300 runes + ellipsis
		t.Errorf("upstream part has %d runes: %q", n, v.Message)
	}
}

// Patterns beyond the first 4 KiB are not looked at.
func TestClassifyScansOnlyPrefix(t *testing.T) {
	body := []byte(`{"error":{"message":"` + strings.Repeat("x", bodyScanLimit) + ` insufficient_quota"}}`)
	if v := Classify(Outcome{Status: 429, Body: body, Now: testNow}); v.Kind != KindRateLimit {
		t.Errorf("Kind = %s, want rate_limit (quota word is past 4 KiB)", v.Kind)
	}
}

// Garbage bodies and headers must not panic.
func TestClassifyGarbage(t *testing.T) {
	bodies := [][]byte{nil, {}, []byte("{"), []byte(`[`), []byte(`{"error":`), []byte("\xff\xfe\x00"),
		[]byte(`{"error":{"details":[{"@type":"x.RetryInfo","retryDelay":{"seconds":"-5"}}]}}`)}
	for _, st := range []int{0, 100, 302, 400, 401, 403, 404, 429, 500, 503, 529, 999, -1} {
		for _, b := range bodies {
			v := Classify(Outcome{Status: st, Body: b, Header: hdr("retry-after", "-1"), Now: testNow})
			if v.RetryAfter < 0 || v.FixedCooldown < 0 {
				t.Errorf("negative duration for %d %q: %+v", st, b, v)
			}
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	o := resp("openai", 429, hdr(
		"retry-after", "2",
		"x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "0",
		"x-ratelimit-reset-requests", "120ms", "x-ratelimit-limit-tokens", "30000",
		"x-ratelimit-remaining-tokens", "29850", "x-ratelimit-reset-tokens", "95ms",
		"content-type", "application/json"),
		[]byte(`{"error":{"message":"Rate limit reached for gpt-4o in organization org-Xk3lQ on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`))
	b.ReportAllocs()
	for b.Loop() {
		if v := Classify(o); v.Kind != KindRateLimit {
			b.Fatal(v.Kind)
		}
	}
}

// errors.Is on wrapped sentinels should still find ErrStall behind other causes.
func TestStallWinsOverDeadline(t *testing.T) {
	err := errors.Join(context.DeadlineExceeded, ErrStall)
	if v := Classify(Outcome{Err: err}); v.Kind != KindStall {
		t.Errorf("Kind = %s, want stall", v.Kind)
	}
}
