package rules

// Builtin is the provider modules' error rules (their Module.Rules, which
// the wiring place hands to New) followed by the rules of every provider.
func Builtin(modules ...Rule) []Rule {
	return append(append([]Rule(nil), modules...), BuiltinRules()...)
}

// BuiltinRules are the shipped rules of every provider (a provider's own
// rules live in its folder, backend/providers/<id>/).
func BuiltinRules() []Rule {
	return []Rule{
		{
			ID: "tool-count-limit", Provider: AnyProvider,
			Match: Match{Statuses: []int{400, 413, 422}, TextMarkers: []string{
				"too many tools", "maximum number of tools", "tools: list should have at most",
				"'tools': array too long", "tools array too long", "number of tools", "工具数量"}},
			Reason: "tool_count_limit", Scope: ScopeModel,
			Description: "the target takes fewer tools than the request carries: it fails over, and its limit is remembered per connection and model so later requests with as many tools go elsewhere",
		},
	}
}
