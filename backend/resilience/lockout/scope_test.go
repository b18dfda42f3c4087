package lockout_test

import (
	"testing"

	"omniroute/backend/resilience/lockout"
)

func TestResolveScope(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		explicit lockout.Scope
		want     lockout.Scope
	}{
		{"429 quota", 429, "", lockout.ScopeQuotaFamily},
		{"403 permission", 403, "", lockout.ScopeQuotaFamily},
		{"402 payment", 402, "", lockout.ScopeQuotaFamily},
		{"404 not found", 404, "", lockout.ScopeModel},
		{"500", 500, "", lockout.ScopeExact},
		{"502 synthesised", 502, "", lockout.ScopeExact},
		{"503", 503, "", lockout.ScopeExact},
		{"504", 504, "", lockout.ScopeExact},
		{"transport 0", 0, "", lockout.ScopeExact},
		{"400", 400, "", lockout.ScopeExact},
		{"401", 401, "", lockout.ScopeExact},
		{"408", 408, "", lockout.ScopeExact},
		{"explicit exact beats 429", 429, lockout.ScopeExact, lockout.ScopeExact},
		{"explicit exact beats 404", 404, lockout.ScopeExact, lockout.ScopeExact},
		{"explicit model beats 429", 429, lockout.ScopeModel, lockout.ScopeModel},
		{"explicit family beats 500", 500, lockout.ScopeQuotaFamily, lockout.ScopeQuotaFamily},
		{"explicit family beats 0", 0, lockout.ScopeQuotaFamily, lockout.ScopeQuotaFamily},
		{"unknown explicit narrows to exact", 429, "bogus", lockout.ScopeExact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lockout.ResolveScope(tt.status, tt.explicit); got != tt.want {
				t.Fatalf("ResolveScope(%d, %q) = %q, want %q", tt.status, tt.explicit, got, tt.want)
			}
		})
	}
}

func TestScopeValid(t *testing.T) {
	tests := []struct {
		s    lockout.Scope
		want bool
	}{
		{lockout.ScopeExact, true},
		{lockout.ScopeModel, true},
		{lockout.ScopeQuotaFamily, true},
		{"", false},
		{"family", false},
		{"EXACT", false},
	}
	for _, tt := range tests {
		if got := tt.s.Valid(); got != tt.want {
			t.Errorf("Scope(%q).Valid() = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// TestFamily: a table without Families keeps every model its own family
// (a quota signal locks the model alone); with Families, the family names
// the lock, whatever the provider is called.
func TestFamily(t *testing.T) {
	bare := lockout.New(nil)
	fam := lockout.NewFamilies(nil, families)
	tests := []struct {
		tab                   *lockout.Table
		provider, model, want string
	}{
		{bare, "acme", "big-1", "big-1"},
		{bare, "", "", ""},
		{fam, "acme", "big-1", "big"},
		{fam, "acme", "mid-4-5", "mid"},
		{fam, "acme", "solo", "solo"},
		{fam, "zeta", "big-1", "big-1"},
	}
	for _, tt := range tests {
		if got := tt.tab.Family(tt.provider, tt.model); got != tt.want {
			t.Errorf("Family(%q, %q) = %q, want %q", tt.provider, tt.model, got, tt.want)
		}
	}
}
