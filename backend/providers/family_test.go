package providers

import "testing"

// TestFamilyShapes: the helpers a row builds its QuotaFamily from, on
// made-up model names ("" : the model is in no family).
func TestFamilyShapes(t *testing.T) {
	prefix := PrefixFamily("big-5", "big-4.5")
	tier := TierFamily("acme-", "large", "small")
	release := ReleaseFamily("acme-")
	tests := []struct {
		name  string
		fam   func(string) string
		model string
		want  string
	}{
		{"prefix", prefix, "big-5", "big-5"},
		{"prefix longer", prefix, "big-5.1-x", "big-5"},
		{"second prefix", prefix, "big-4.5-air", "big-4.5"},
		{"no prefix", prefix, "big-4", ""},
		{"tier first segment", tier, "acme-large-2", "acme-large"},
		{"tier later segment", tier, "acme-3-small-20240101", "acme-small"},
		{"no tier", tier, "acme-medium-1", ""},
		{"tier of another name", tier, "other-large", ""},
		{"tier not a whole segment", tier, "acme-larger", ""},
		{"release date", release, "acme-2.5-pro-preview-05-06", "acme-2.5-pro"},
		{"release version", release, "acme-1.5-pro-002", "acme-1.5-pro"},
		{"release latest", release, "acme-1.5-flash-latest", "acme-1.5-flash"},
		{"release exp keeps two segments", release, "acme-exp-1206", "acme-exp"},
		{"nothing to strip", release, "acme-2.5-pro", ""},
		{"marker not trailing", release, "acme-2.5-pro-preview-tts", ""},
		{"release of another name", release, "other-2.5-pro-preview", ""},
	}
	for _, tt := range tests {
		if got := tt.fam(tt.model); got != tt.want {
			t.Errorf("%s: family of %q = %q, want %q", tt.name, tt.model, got, tt.want)
		}
	}
}

// TestCatalogQuotaFamily: the catalogue asks the row (by id or alias, any
// case) with the lower-cased model; a row without families, an unknown
// provider or a model in no family keeps the model unchanged.
func TestCatalogQuotaFamily(t *testing.T) {
	rows := []Provider{
		{ID: "acme", Aliases: []string{"ac"}, QuotaFamily: PrefixFamily("big-")},
		{ID: "plain"},
	}
	cat := (&Catalog{byID: map[string]Provider{}}).WithModules(Module{ID: "acme", Rows: rows})
	tests := []struct{ provider, model, want string }{
		{"acme", "big-1", "big-"},
		{"AC", "BIG-2", "big-"},
		{"acme", "Solo-1", "Solo-1"},
		{"plain", "big-1", "big-1"},
		{"nobody", "big-1", "big-1"},
	}
	for _, tt := range tests {
		if got := cat.QuotaFamily(tt.provider, tt.model); got != tt.want {
			t.Errorf("QuotaFamily(%q, %q) = %q, want %q", tt.provider, tt.model, got, tt.want)
		}
	}
}
