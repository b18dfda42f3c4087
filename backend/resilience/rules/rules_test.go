package rules_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"omniroute/backend/providers"
	"omniroute/backend/resilience/rules"
	"omniroute/backend/resilience/verdict"
)

var now = time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)

// traits are the catalogue's flags, so the table exercises the real configuration.
func traits(provider string) rules.Traits {
	p, _ := providers.NewCatalog().Lookup(provider)
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
	e := rules.New(nil)
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
