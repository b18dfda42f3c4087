package bedrock

import "omniroute/backend/resilience/rules"

// builtinRules are Bedrock's error rules (the AWS error type is the code
// the executor restates Converse errors with).
func builtinRules() []rules.Rule {
	return []rules.Rule{
		{
			ID: "bedrock-throttling", Provider: "bedrock",
			Match:  rules.Match{Codes: []string{"ThrottlingException"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeModel, CooldownMs: 30 * 1000,
			Description: "Bedrock ThrottlingException: this model's request or token rate on the account; the model leaves the connection for 30 s (or the Retry-After)",
		},
		{
			ID: "bedrock-service-quota", Provider: "bedrock",
			Match:  rules.Match{Codes: []string{"ServiceQuotaExceededException"}},
			Reason: "quota_exhausted", Scope: rules.ScopeConnection,
			Description: "Bedrock ServiceQuotaExceededException (a 400): the account's quota; fail over and cool the connection instead of passing the 400 on",
		},
		{
			ID: "bedrock-model-not-ready", Provider: "bedrock",
			Match:  rules.Match{Codes: []string{"ModelNotReadyException"}},
			Reason: "rate_limit_exceeded", Scope: rules.ScopeModel, CooldownMs: 60 * 1000,
			Description: "Bedrock ModelNotReadyException: the model is not ready to serve yet; only the model leaves routing, for a minute",
		},
		{
			ID: "bedrock-model-access-denied", Provider: "bedrock",
			Match:  rules.Match{Statuses: []int{403}, Codes: []string{"AccessDeniedException"}},
			Reason: "model_access_denied", Scope: rules.ScopeModel, CooldownMs: 3600 * 1000,
			Description: "Bedrock AccessDeniedException: the account has no access to this model (not enabled, or IAM denies it); only the model leaves routing, for 1 h",
		},
		{
			ID: "bedrock-credentials", Provider: "bedrock",
			Match:  rules.Match{Codes: []string{"UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException", "IncompleteSignatureException"}},
			Reason: "auth_error", Scope: rules.ScopeConnection,
			Description: "Bedrock refuses the credentials (unknown key id, wrong secret, expired session token): the connection's key is at fault",
		},
		{
			ID: "bedrock-model-error", Provider: "bedrock",
			Match:  rules.Match{Codes: []string{"ModelErrorException", "ModelTimeoutException", "ModelStreamErrorException"}},
			Reason: "server_error", Scope: rules.ScopeProvider,
			Description: "Bedrock model-side failures (424 ModelErrorException, 408 ModelTimeoutException): evidence for the provider breaker, the key is not cooled",
		},
	}
}
