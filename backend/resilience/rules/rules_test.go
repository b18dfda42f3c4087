package rules_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/backend/providers/registry"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/verdict"
)

var now = time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)

// traits are the catalogue's flags, so the table exercises the real configuration.
func traits(provider string) rules.Traits {
	p, _ := registry.Catalog(nil).Lookup(provider)
	return rules.Traits{FullText: p.RuleFullText, HonorsScope: p.HonorsRuleScope}
}

// leaves says what leaves routing after the verdict: the connection (cooled or
// terminal), the model (locked), the provider (breaker evidence) or nothing.
func leaves(v verdict.Verdict) string {
	switch {
	case v.Terminal != "":
		return "terminal"
	case v.CoolConnection:
		return "connection"
	case v.ModelLock > 0, v.Scope == verdict.ScopeModel && v.Kind == verdict.KindRateLimit:
		return "model" // a rule's model lock, or a model cooldown (scope from evidence)
	case v.CountsForBreaker && !v.SkipProviderBreaker:
		return "provider"
	}
	return "nothing"
}

// clientStatus is the status the client is shown when this is the last attempt:
// failover verdicts end as the gateway's own answer; 429 for limits (restated
// ones included), otherwise the upstream status passes (a permanent model
// denial's too).
func clientStatus(v verdict.Verdict) int {
	switch {
	case v.Code == rules.CodeToolCountLimit:
		return 400
	case v.Kind == verdict.KindRateLimit || v.Kind == verdict.KindConcurrencyLimit || v.ClientRetryAfter > 0:
		return 429
	case !v.Failover, v.Kind == verdict.KindForbidden && v.ModelLock > 0: // a permanent denial passes as is
		return v.Status
	case v.Kind == verdict.KindNotFound:
		return 404
	}
	return 502
}

type captured struct {
	name     string
	provider string
	status   int
	header   map[string]string
	body     string

	wantStatus   int           // status the layers see (restated when a rule corrected it)
	wantClient   int           // status the client gets if nothing else serves
	wantClientRA time.Duration // Retry-After the client is told (restated errors)
	wantKind     verdict.Kind
	wantScope    verdict.Scope
	wantLeaves   string
	wantRule     string
	wantLock     time.Duration
}

// capturedBodies are upstream error answers in the providers' own words.
var capturedBodies = []captured{
	// agentrouter (new-api based): Chinese quota wording on 403/400.
	{name: "agentrouter 403 用户额度不足", provider: "agentrouter", status: 403,
		body:       `{"error":{"message":"用户额度不足, 剩余额度: ＄0.000000 (request id: 2025110312000012345)","type":"new_api_error","param":"","code":null}}`,
		wantStatus: 429, wantClient: 429, wantClientRA: 60 * time.Second, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection,
		wantLeaves: "connection", wantRule: "agentrouter-quota-as-403>agentrouter-user-quota-exhausted"},
	{name: "agentrouter 400 额度不足", provider: "agentrouter", status: 400,
		body:       `{"error":{"message":"额度不足","type":"one_api_error","code":"insufficient_user_quota"}}`,
		wantStatus: 429, wantClient: 429, wantClientRA: 60 * time.Second, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection,
		wantLeaves: "connection", wantRule: "agentrouter-quota-as-403>agentrouter-user-quota-exhausted"},
	{name: "agentrouter 403 quota with its own Retry-After", provider: "agentrouter", status: 403, header: map[string]string{"Retry-After": "120"},
		body:       `{"error":{"message":"用户额度不足","type":"new_api_error"}}`,
		wantStatus: 429, wantClient: 429, wantClientRA: 120 * time.Second, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection,
		wantLeaves: "connection", wantRule: "agentrouter-quota-as-403>agentrouter-user-quota-exhausted"},
	{name: "agentrouter 400 令牌额度不足 (plain text)", provider: "agentrouter", status: 400,
		body:       `该令牌额度不足，请联系管理员`,
		wantStatus: 429, wantClient: 429, wantClientRA: 60 * time.Second, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection,
		wantLeaves: "connection", wantRule: "agentrouter-quota-as-403>agentrouter-user-quota-exhausted"},
	{name: "agentrouter 403 无权访问模型 never restated", provider: "agentrouter", status: 403,
		body:       `{"error":{"message":"无权访问模型 claude-opus-4-1-20250805 (request id: 20251103)","type":"new_api_error"}}`,
		wantStatus: 403, wantClient: 403, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeModel,
		wantLeaves: "model", wantRule: "agentrouter-model-access-denied", wantLock: 6 * time.Hour},
	{name: "agentrouter 403 both markers: the exclusion wins", provider: "agentrouter", status: 403,
		body:       `{"error":{"message":"无权访问模型 gpt-5 (用户额度不足)","type":"new_api_error"}}`,
		wantStatus: 403, wantClient: 403, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeModel,
		wantLeaves: "model", wantRule: "agentrouter-model-access-denied", wantLock: 6 * time.Hour},
	// The same bodies with their text \u-escaped, as many JSON encoders write it.
	{name: "agentrouter 403 用户额度不足 \\u-escaped", provider: "agentrouter", status: 403,
		body:       `{"error":{"message":"\u7528\u6237\u989d\u5ea6\u4e0d\u8db3, \u5269\u4f59\u989d\u5ea6","type":"new_api_error"}}`,
		wantStatus: 429, wantClient: 429, wantClientRA: 60 * time.Second, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection,
		wantLeaves: "connection", wantRule: "agentrouter-quota-as-403>agentrouter-user-quota-exhausted"},
	{name: "agentrouter 403 both markers \\u-escaped: the exclusion wins", provider: "agentrouter", status: 403,
		body:       `{"error":{"message":"\u65e0\u6743\u8bbf\u95ee\u6a21\u578b gpt-5 (\u7528\u6237\u989d\u5ea6\u4e0d\u8db3)","type":"new_api_error"}}`,
		wantStatus: 403, wantClient: 403, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeModel,
		wantLeaves: "model", wantRule: "agentrouter-model-access-denied", wantLock: 6 * time.Hour},
	{name: "agentrouter 401 无效的令牌", provider: "agentrouter", status: 401,
		body:       `{"error":{"message":"无效的令牌 (request id: 20251103)","type":"new_api_error"}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "agentrouter 429 上游负载已饱和", provider: "agentrouter", status: 429,
		body:       `{"error":{"message":"当前分组上游负载已饱和，请稍后再试","type":"new_api_error"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "agentrouter 503 无可用渠道", provider: "agentrouter", status: 503,
		body:       `{"error":{"message":"当前分组 default 下对于模型 gpt-5 无可用渠道","type":"new_api_error"}}`,
		wantStatus: 503, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},
	{name: "agentrouter 403 令牌额度已用尽 (no marker: classifier alone)", provider: "agentrouter", status: 403,
		body:       `{"error":{"message":"该令牌额度已用尽","type":"new_api_error"}}`,
		wantStatus: 403, wantClient: 502, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection"},

	// opencode Zen: IP-bucketed free tier.
	{name: "opencode 429 rate limit", provider: "opencode", status: 429,
		body:       `{"type":"error","error":{"type":"RateLimitError","message":"Rate limit exceeded. Please try again later."}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "opencode-rate-limit"},
	{name: "opencode 429 monthly usage limit", provider: "opencode", status: 429,
		body:       `{"type":"error","error":{"type":"FreeUsageLimitError","message":"You have reached your monthly usage limit for free models. Add credits to continue."}}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection", wantRule: "opencode-subscription-quota"},
	{name: "opencode 401", provider: "opencode", status: 401,
		body:       `{"type":"error","error":{"type":"AuthError","message":"Invalid API key."}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "opencode 500", provider: "opencode", status: 500,
		body:       `{"type":"error","error":{"type":"UnknownError","message":"Internal server error"}}`,
		wantStatus: 500, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},
	{name: "opencode 404 model", provider: "opencode", status: 404,
		body:       `{"type":"error","error":{"type":"ModelError","message":"Model qwen3-coder-x not supported"}}`,
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},

	// GLM (Z.ai / Zhipu): business codes in Chinese.
	{name: "glm 429 1113 余额不足", provider: "glm", status: 429,
		body:       `{"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection, wantLeaves: "connection", wantRule: "glm-quota-package"},
	{name: "glm 429 1308 5小时使用上限", provider: "glm", status: 429,
		body:       `{"error":{"code":"1308","message":"已达到 5 小时的使用上限。您的限额将在 2026-12-03 08:00:00 重置。"}}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection, wantLeaves: "connection", wantRule: "glm-quota-package"},
	{name: "glm 429 1302 并发数过高", provider: "glm", status: 429,
		body:       `{"error":{"code":"1302","message":"您当前使用该API的并发数过高，请降低并发，或联系客服增加限额。"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindConcurrencyLimit, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "glm 400 1261 超过最大长度", provider: "glm", status: 400,
		body:       `{"error":{"code":"1261","message":"Prompt 超过最大长度，请减少输入内容"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContextLength, wantLeaves: "nothing"},
	{name: "glm 400 1301 敏感内容", provider: "glm", status: 400,
		body:       `{"error":{"code":"1301","message":"系统检测到输入或生成内容可能包含不安全或敏感内容，请您避免输入易产生敏感内容的提示语，感谢您的配合。"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContentPolicy, wantLeaves: "nothing"},
	{name: "glm 400 1211 模型不存在", provider: "glm", status: 400,
		body:       `{"error":{"code":"1211","message":"模型不存在，请检查模型代码。"}}`,
		wantStatus: 400, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "glm-model-not-found", wantLock: time.Hour},
	{name: "glm 403 1220 无权访问", provider: "glm", status: 403,
		body:       `{"error":{"code":"1220","message":"您无权访问glm-4.6"}}`,
		wantStatus: 403, wantClient: 403, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "glm-model-no-access", wantLock: time.Hour},
	{name: "glm 401 1000 身份验证失败", provider: "glm", status: 401,
		body:       `{"error":{"code":"1000","message":"身份验证失败。"}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "glm 500", provider: "glm", status: 500,
		body:       `{"error":{"code":"500","message":"Internal Error"}}`,
		wantStatus: 500, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},

	// MiniMax: base_resp business codes.
	{name: "minimax 1002 rate limit on 200-style body with 429", provider: "minimax", status: 429,
		body:       `{"base_resp":{"status_code":1002,"status_msg":"rate limit exceeded(RPM)"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "minimax-rate-limit"},
	{name: "minimax 1039 token limit on 500", provider: "minimax", status: 500,
		body:       `{"base_resp":{"status_code":1039,"status_msg":"token limit exceeded(TPM)"}}`,
		wantStatus: 500, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "minimax-rate-limit"},
	{name: "minimax 1008 insufficient balance", provider: "minimax", status: 400,
		body:       `{"base_resp":{"status_code":1008,"status_msg":"insufficient balance"}}`,
		wantStatus: 400, wantClient: 502, wantKind: verdict.KindCreditsExhausted, wantScope: verdict.ScopeConnection, wantLeaves: "terminal"},
	{name: "minimax 1004 login fail", provider: "minimax", status: 401,
		body:       `{"base_resp":{"status_code":1004,"status_msg":"login fail: Please carry the API secret key in the 'Authorization' field of the request header"}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "minimax 2013 invalid params", provider: "minimax", status: 400,
		body:       `{"base_resp":{"status_code":2013,"status_msg":"invalid params, tool call id is invalid"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindBadRequest, wantLeaves: "nothing"},
	{name: "minimax anthropic-style usage limit", provider: "minimax", status: 429,
		body:       `{"type":"error","error":{"type":"rate_limit_error","message":"usage limit exceeded (2056)","http_code":"429"}}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection"},

	// Gemini.
	{name: "gemini 429 RESOURCE_EXHAUSTED with RetryInfo", provider: "gemini", status: 429,
		body:       `[{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}]`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection"},
	{name: "gemini 400 API_KEY_INVALID", provider: "gemini", status: 400,
		body:       `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`,
		wantStatus: 400, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "gemini 403 consumer suspended", provider: "gemini", status: 403,
		body:       `{"error":{"code":403,"message":"Permission denied: Consumer 'api_key:AIzaSyXXXXXXXXXXXXXXXX' has been suspended.","status":"PERMISSION_DENIED"}}`,
		wantStatus: 403, wantClient: 502, wantKind: verdict.KindBanned, wantScope: verdict.ScopeConnection, wantLeaves: "terminal"},
	{name: "gemini 503 overloaded", provider: "gemini", status: 503,
		body:       `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
		wantStatus: 503, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},
	{name: "gemini 404 model", provider: "gemini", status: 404,
		body:       `{"error":{"code":404,"message":"models/gemini-9-pro is not found for API version v1beta, or is not supported for generateContent.","status":"NOT_FOUND"}}`,
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},
	{name: "gemini 400 token count", provider: "gemini", status: 400,
		body:       `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContextLength, wantLeaves: "nothing"},

	// Anthropic.
	{name: "anthropic 429 rate_limit_error", provider: "anthropic", status: 429, header: map[string]string{"retry-after": "12"},
		body:       `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your organization's rate limit of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "anthropic 529 overloaded", provider: "anthropic", status: 529,
		body:       `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		wantStatus: 529, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},
	{name: "anthropic 400 prompt too long", provider: "anthropic", status: 400,
		body:       `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContextLength, wantLeaves: "nothing"},
	{name: "anthropic 401 invalid x-api-key", provider: "anthropic", status: 401,
		body:       `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "anthropic 400 credit balance too low", provider: "anthropic", status: 400,
		body:       `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`,
		wantStatus: 400, wantClient: 502, wantKind: verdict.KindCreditsExhausted, wantScope: verdict.ScopeConnection, wantLeaves: "terminal"},
	{name: "claude 403 request not allowed", provider: "claude", status: 403,
		body:       `{"type":"error","error":{"type":"permission_error","message":"Request not allowed"}}`,
		wantStatus: 403, wantClient: 502, wantKind: verdict.KindRequestRejected, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "anthropic 400 too many tools", provider: "anthropic", status: 400,
		body:       `{"type":"error","error":{"type":"invalid_request_error","message":"tools: List should have at most 128 items after validation, not 200"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindBadRequest, wantLeaves: "nothing", wantRule: "tool-count-limit"},

	// OpenAI.
	{name: "openai 429 insufficient_quota", provider: "openai", status: 429,
		body:       `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection"},
	{name: "openai 429 RPM", provider: "openai", status: 429, header: map[string]string{"x-ratelimit-reset-requests": "120ms"},
		body:       `{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "openai 401 incorrect key", provider: "openai", status: 401,
		body:       `{"error":{"message":"Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "openai 400 context_length_exceeded", provider: "openai", status: 400,
		body:       `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContextLength, wantLeaves: "nothing"},
	{name: "openai 400 tools array too long", provider: "openai", status: 400,
		body:       `{"error":{"message":"Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 300 instead.","type":"invalid_request_error","param":"tools","code":"array_above_max_length"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindBadRequest, wantLeaves: "nothing", wantRule: "tool-count-limit"},
	{name: "openai 404 model_not_found", provider: "openai", status: 404,
		body:       "{\"error\":{\"message\":\"The model `gpt-9` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}",
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},
	{name: "openai 500 server_error", provider: "openai", status: 500,
		body:       `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`,
		wantStatus: 500, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},
	{name: "openai 403 account_deactivated", provider: "openai", status: 403,
		body:       `{"error":{"message":"Your account has been deactivated, please check your email for more information.","type":"invalid_request_error","code":"account_deactivated","param":null}}`,
		wantStatus: 403, wantClient: 502, wantKind: verdict.KindBanned, wantScope: verdict.ScopeConnection, wantLeaves: "terminal"},

	// The OpenAI-compatible family (issue 30), in each vendor's own words.
	{name: "mistral 429 capacity", provider: "mistral", status: 429,
		body:       `{"object":"error","message":"Service tier capacity exceeded for this model.","type":"service_tier_capacity_exceeded","param":null,"code":"3505"}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "mistral 429 rate", provider: "mistral", status: 429,
		body:       `{"message":"Requests rate limit exceeded"}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "mistral 401", provider: "mistral", status: 401,
		body:       `{"message":"Unauthorized","request_id":"8c2d1e0f"}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "mistral 400 ctx", provider: "mistral", status: 400,
		body:       `{"object":"error","message":"Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length","type":"invalid_request_message_error","param":null,"code":"3051"}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContextLength, wantLeaves: "nothing"},
	{name: "xai 403 no credits", provider: "xai", status: 403,
		body:       `{"code":"The caller does not have permission to execute the specified operation","error":"Your newly created team doesn't have any credits yet. You can purchase credits on https://console.x.ai/team/0a1b2c."}`,
		wantStatus: 403, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection", wantRule: "xai-credits"},
	{name: "xai 429 spent", provider: "xai", status: 429,
		body:       `{"code":"Some resource has been exhausted","error":"Your team 0a1b2c has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit."}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection", wantRule: "xai-credits"},
	{name: "xai 400 key", provider: "xai", status: 400,
		body:       `{"code":"Client specified an invalid argument","error":"Incorrect API key provided: xa***bc. You can obtain an API key from https://console.x.ai."}`,
		wantStatus: 400, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "xai 404 model", provider: "xai", status: 404,
		body:       `{"code":"Some requested entity was not found","error":"The model grok-9 does not exist or your team 0a1b2c does not have access to it. Please ensure you're using the correct API key."}`,
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},
	{name: "together 402", provider: "together", status: 402,
		body:       `{"id":"nz7ab","error":{"message":"Credit limit exceeded. Please navigate to https://api.together.xyz/settings/billing to add credit or upgrade your plan.","type":"credit_limit","param":null,"code":null}}`,
		wantStatus: 402, wantClient: 502, wantKind: verdict.KindCreditsExhausted, wantScope: verdict.ScopeConnection, wantLeaves: "terminal"},
	{name: "together 429", provider: "together", status: 429,
		body:       `{"id":"nz7ac","error":{"message":"You are on tier Build Tier 1, which offers 3000 queries per minute. Please upgrade your tier.","type":"model_rate_limit","param":null,"code":null}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "fireworks 412", provider: "fireworks", status: 412,
		body:       `{"error":{"object":"error","type":"invalid_request_error","message":"Account fw-acct is suspended, possibly due to reaching the monthly spending limit or failure to pay past invoices."}}`,
		wantStatus: 412, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection", wantRule: "fireworks-account-suspended"},
	{name: "fireworks 404", provider: "fireworks", status: 404,
		body:       `{"error":{"object":"error","type":"invalid_request_error","code":"NOT_FOUND","message":"Model not found, inaccessible, and/or not deployed"}}`,
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},
	{name: "cerebras 429 minute", provider: "cerebras", status: 429,
		body:       `{"message":"Tokens per minute limit exceeded - too many tokens processed.","type":"too_many_tokens_error","param":"quota","code":"token_quota_exceeded"}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "cerebras-per-minute"},
	{name: "cerebras 429 day", provider: "cerebras", status: 429,
		body:       `{"message":"Tokens per day limit exceeded - too many tokens processed.","type":"too_many_tokens_error","param":"quota","code":"token_quota_exceeded"}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection", wantRule: "cerebras-per-day"},
	{name: "cerebras 429 queue", provider: "cerebras", status: 429,
		body:       `{"message":"We're experiencing high traffic right now! Please try again soon.","type":"too_many_requests_error","param":"queue","code":"queue_exceeded"}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "moonshot 429 quota", provider: "moonshot", status: 429,
		body:       `{"error":{"message":"Your account org-ab12 is suspended due to insufficient balance, please recharge your account or check your plan and billing details","type":"exceeded_current_quota_error"}}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeQuotaFamily, wantLeaves: "connection"},
	{name: "moonshot 429 overloaded", provider: "moonshot", status: 429,
		body:       `{"error":{"message":"The engine is currently overloaded, please try again later","type":"engine_overloaded_error"}}`,
		wantStatus: 429, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider", wantRule: "moonshot-engine-overloaded"},
	{name: "moonshot 429 rate", provider: "moonshot", status: 429,
		body:       `{"error":{"message":"Your account org-ab12 request reached organization max RPM: 200, please try again after 1 seconds","type":"rate_limit_reached_error"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "moonshot 401", provider: "moonshot", status: 401,
		body:       `{"error":{"message":"Invalid Authentication","type":"invalid_authentication_error"}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "dashscope 400 arrearage", provider: "dashscope", status: 400,
		body:       `{"error":{"code":"Arrearage","param":null,"message":"Access denied, please make sure your account is in good standing.","type":"Arrearage"},"id":"chatcmpl-1","request_id":"1"}`,
		wantStatus: 400, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection, wantLeaves: "connection", wantRule: "dashscope-arrearage"},
	{name: "dashscope 429 throttling", provider: "dashscope", status: 429,
		body:       `{"error":{"code":"Throttling.RateQuota","param":null,"message":"Requests rate limit exceeded, please try again later.","type":"Throttling.RateQuota"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "dashscope-throttling", wantLock: time.Minute},
	{name: "dashscope 429 free quota", provider: "dashscope", status: 403,
		body:       `{"error":{"code":"AllocationQuota.FreeTierOnly","param":null,"message":"The free tier of the model has been exhausted. If you wish to continue access the model on a paid basis, please disable the \"use free tier only\" mode in the management console.","type":"AllocationQuota.FreeTierOnly"}}`,
		wantStatus: 403, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "dashscope-free-tier-exhausted", wantLock: 24 * time.Hour},
	{name: "dashscope 400 inspection", provider: "dashscope", status: 400,
		body:       `{"error":{"code":"data_inspection_failed","param":null,"message":"Input data may contain inappropriate content.","type":"data_inspection_failed"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindBadRequest, wantLeaves: "nothing"},
	{name: "dashscope 401", provider: "dashscope", status: 401,
		body:       `{"error":{"message":"Incorrect API key provided. ","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "perplexity 401 html", provider: "perplexity", status: 401,
		body:       `<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center><hr><center>openresty/1.25.3.1</center></body></html>`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},
	{name: "perplexity 400 model", provider: "perplexity", status: 400,
		body:       `{"error":{"message":"Invalid model 'sonar-x'. Permitted models can be found in the documentation at https://docs.perplexity.ai/guides/model-cards.","type":"invalid_model","code":400}}`,
		wantStatus: 400, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing", wantRule: "perplexity-invalid-model"},
	{name: "nvidia 402", provider: "nvidia", status: 402,
		body:       `{"type":"urn:inference-service:problem-details:payment-required","title":"Payment Required","status":402,"detail":"Account 'ab12': Cloud credits expired - Please contact NVIDIA representatives","instance":"/v2/nvcf/pexec/functions/1"}`,
		wantStatus: 402, wantClient: 502, wantKind: verdict.KindCreditsExhausted, wantScope: verdict.ScopeConnection, wantLeaves: "terminal"},
	{name: "nvidia 404", provider: "nvidia", status: 404,
		body:       `{"status":404,"title":"Not Found","detail":"Function 'f1': Not found for account 'ab12'"}`,
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},
	{name: "nvidia 429", provider: "nvidia", status: 429,
		body:       `{"status":429,"title":"Too Many Requests"}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "sambanova 429", provider: "sambanova", status: 429,
		body:       `{"error":{"code":"rate_limit_exceeded","message":"Rate limit exceeded","type":"rate_limit_exceeded"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "nebius 400 ctx", provider: "nebius", status: 400,
		body:       `{"detail":"This model's maximum context length is 131072 tokens. However, you requested 140000 tokens. Please reduce the length of the messages or completion."}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContextLength, wantLeaves: "nothing"},

	// GitHub Copilot (issue 30): its chat API's rate-limit, quota and entitlement answers.
	{name: "copilot 429 model rate", provider: "github-copilot", status: 429,
		body:       `{"error":{"message":"Sorry, you have exhausted this model's rate limit. Please wait a moment before trying again, or switch to a different model.","code":"rate_limited"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "copilot 429 account rate", provider: "github-copilot", status: 429,
		body:       `{"error":{"message":"Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours.","code":"rate_limited"}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeConnection, wantLeaves: "connection", wantRule: "copilot-account-rate-limit"},
	{name: "copilot 402 quota", provider: "github-copilot", status: 402,
		body:       `{"error":{"message":"You have exceeded your monthly premium request allowance. Upgrade your plan or wait for the allowance to reset.","code":"quota_exceeded"}}`,
		wantStatus: 402, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection, wantLeaves: "connection", wantRule: "copilot-quota"},
	{name: "copilot 400 model_not_supported", provider: "github-copilot", status: 400,
		body:       `{"error":{"message":"The requested model is not supported.","code":"model_not_supported","param":"model","type":"invalid_request_error"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "copilot-model-not-supported", wantLock: time.Hour},
	{name: "copilot 403 feature", provider: "github-copilot", status: 403,
		body:       `{"error":{"message":"You are not authorized to use this Copilot feature, it requires an enterprise or organization policy to be enabled.","code":"unauthorized"}}`,
		wantStatus: 403, wantClient: 403, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "copilot-feature-not-entitled", wantLock: 6 * time.Hour},
	{name: "copilot 401 token expired", provider: "github-copilot", status: 401,
		body:       `unauthorized: token expired`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},

	// Ollama's native API (errors as the ollama executor restates {"error": "…"}).
	{name: "ollama 404 model not pulled", provider: "ollama", status: 404,
		body:       `{"error":{"code":"model_not_found","message":"model \"llama9\" not found, try pulling it first","type":"model_not_found"}}`,
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},
	{name: "ollama 500 runner", provider: "ollama", status: 500,
		body:       `{"error":{"code":"server_error","message":"llama runner process has terminated: exit status 2","type":"server_error"}}`,
		wantStatus: 500, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},
	{name: "ollama 400 bad tool arguments", provider: "ollama", status: 400,
		body:       `{"error":{"code":"ollama_error","message":"json: cannot unmarshal string into Go struct field ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments","type":"ollama_error"}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindBadRequest, wantLeaves: "nothing"},

	// Azure OpenAI: the content filter is the caller's, never retried or cooled; 429 honours Retry-After.
	{name: "azure 400 cf", provider: "azure-openai", status: 400,
		body:       `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"violence":{"filtered":true,"severity":"medium"}}}}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContentPolicy, wantLeaves: "nothing"},
	{name: "azure 429", provider: "azure-openai", status: 429, header: map[string]string{"retry-after": "7", "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "12000"},
		body:       `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded call rate limit of your current OpenAI S0 pricing tier. Please retry after 7 seconds."}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model"},
	{name: "azure 404 deployment", provider: "azure-openai", status: 404,
		body:       `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}`,
		wantStatus: 404, wantClient: 404, wantKind: verdict.KindNotFound, wantScope: verdict.ScopeModel, wantLeaves: "nothing"},
	{name: "azure 401", provider: "azure-openai", status: 401,
		body:       `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`,
		wantStatus: 401, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection"},

	// AWS Bedrock (Converse errors as the bedrock executor restates them: the AWS error type as code).
	{name: "bedrock 429 ThrottlingException", provider: "bedrock", status: 429,
		body:       `{"error":{"code":"ThrottlingException","type":"ThrottlingException","message":"Too many requests, please wait before trying again."}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "bedrock-throttling", wantLock: 30 * time.Second},
	{name: "bedrock 400 ServiceQuotaExceededException", provider: "bedrock", status: 400,
		body:       `{"error":{"code":"ServiceQuotaExceededException","type":"ServiceQuotaExceededException","message":"Your request exceeds the service quota for your account. You can view your quotas at https://docs.aws.amazon.com/servicequotas/latest/userguide/gs-request-quota.html."}}`,
		wantStatus: 400, wantClient: 502, wantKind: verdict.KindQuota, wantScope: verdict.ScopeConnection, wantLeaves: "connection", wantRule: "bedrock-service-quota"},
	{name: "bedrock 429 ModelNotReadyException", provider: "bedrock", status: 429,
		body:       `{"error":{"code":"ModelNotReadyException","type":"ModelNotReadyException","message":"Model is not ready for inference. Wait and try your request again."}}`,
		wantStatus: 429, wantClient: 429, wantKind: verdict.KindRateLimit, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "bedrock-model-not-ready", wantLock: time.Minute},
	{name: "bedrock 403 AccessDeniedException", provider: "bedrock", status: 403,
		body:       `{"error":{"code":"AccessDeniedException","type":"AccessDeniedException","message":"You don't have access to the model with the specified model ID."}}`,
		wantStatus: 403, wantClient: 403, wantKind: verdict.KindForbidden, wantScope: verdict.ScopeModel, wantLeaves: "model", wantRule: "bedrock-model-access-denied", wantLock: time.Hour},
	{name: "bedrock 403 UnrecognizedClientException", provider: "bedrock", status: 403,
		body:       `{"error":{"code":"UnrecognizedClientException","type":"UnrecognizedClientException","message":"The security token included in the request is invalid."}}`,
		wantStatus: 403, wantClient: 502, wantKind: verdict.KindAuth, wantScope: verdict.ScopeConnection, wantLeaves: "connection", wantRule: "bedrock-credentials"},
	{name: "bedrock 400 ValidationException input too long", provider: "bedrock", status: 400,
		body:       `{"error":{"code":"ValidationException","type":"ValidationException","message":"The model returned the following errors: Input is too long for requested model."}}`,
		wantStatus: 400, wantClient: 400, wantKind: verdict.KindContextLength, wantLeaves: "nothing"},
	{name: "bedrock 424 ModelErrorException", provider: "bedrock", status: 424,
		body:       `{"error":{"code":"ModelErrorException","type":"ModelErrorException","message":"The system encountered an unexpected error during processing. Try your request again."}}`,
		wantStatus: 424, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeProvider, wantLeaves: "provider", wantRule: "bedrock-model-error"},
	{name: "bedrock 503 ServiceUnavailableException", provider: "bedrock", status: 503,
		body:       `{"error":{"code":"ServiceUnavailableException","type":"ServiceUnavailableException","message":"Bedrock is unable to process your request."}}`,
		wantStatus: 503, wantClient: 502, wantKind: verdict.KindServer, wantScope: verdict.ScopeExact, wantLeaves: "provider"},
}

func outcome(c captured) verdict.Outcome {
	h := http.Header{}
	for k, v := range c.header {
		h.Set(k, v)
	}
	return verdict.Outcome{Status: c.status, Header: h, Body: []byte(c.body), Provider: c.provider, Now: now}
}

func TestCapturedUpstreamErrors(t *testing.T) {
	if len(capturedBodies) < 40 {
		t.Fatalf("only %d captured shapes, want at least 40", len(capturedBodies))
	}
	e := rules.New(nil, registry.Catalog(nil).Restatements(), registry.Catalog(nil).Rules()...)
	for _, c := range capturedBodies {
		t.Run(c.name, func(t *testing.T) {
			v := e.Classify(outcome(c), traits(c.provider))
			if v.Status != c.wantStatus || v.Kind != c.wantKind || v.Scope != c.wantScope {
				t.Errorf("status/kind/scope = %d/%s/%q, want %d/%s/%q", v.Status, v.Kind, v.Scope, c.wantStatus, c.wantKind, c.wantScope)
			}
			if got := clientStatus(v); got != c.wantClient {
				t.Errorf("client status %d, want %d", got, c.wantClient)
			}
			if v.ClientRetryAfter != c.wantClientRA {
				t.Errorf("client Retry-After %v, want %v", v.ClientRetryAfter, c.wantClientRA)
			}
			if got := leaves(v); got != c.wantLeaves {
				t.Errorf("leaves routing: %s, want %s (%+v)", got, c.wantLeaves, v)
			}
			if v.Rule != c.wantRule {
				t.Errorf("rule %q, want %q", v.Rule, c.wantRule)
			}
			if v.ModelLock != c.wantLock {
				t.Errorf("model lock %v, want %v", v.ModelLock, c.wantLock)
			}
			if restated := v.RestatedFrom != 0; restated != (c.wantStatus != c.status) || restated && v.Code != verdict.CodeQuotaRestated {
				t.Errorf("restated from %d with code %s; want restated %v with %s", v.RestatedFrom, v.Code, c.wantStatus != c.status, verdict.CodeQuotaRestated)
			}
			if c.wantRule != "" && strings.Contains(c.wantRule, "quota") && v.Terminal != "" {
				t.Errorf("a quota rule made the connection terminal: %+v", v)
			}
		})
	}
}
