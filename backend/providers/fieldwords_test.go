package providers

import "testing"

// TestUserWords (issue 41): a schema refusal reads with the field's form
// label where the server's wording names its path.
func TestUserWords(t *testing.T) {
	s := &DataSchema{Fields: []Field{
		{Name: "accessKeyId", Label: "Access key ID"},
		{Name: "deployments", Label: "Deployments"},
		{Name: "region"}, // no label: its name
	}}
	tests := []struct{ in, want string }{
		{"providerSpecificData.accessKeyId must be 16-128 capital letters and digits (an AWS access key ID, such as AKIA…)",
			"Access key ID must be 16-128 capital letters and digits (an AWS access key ID, such as AKIA…)"},
		{`providerSpecificData.deployments["gpt 4o"]: a deployment name is 1-64 letters, digits, '-', '_' or '.'`,
			`Deployments "gpt 4o": a deployment name is 1-64 letters, digits, '-', '_' or '.'`},
		{`providerSpecificData.deployments: model name "" must be 1-200 characters without spaces`,
			`Deployments: model name "" must be 1-200 characters without spaces`},
		{"providerSpecificData.region must be a string", "region must be a string"},
		{"providerSpecificData.tokenSealed is the gateway's own", "providerSpecificData.tokenSealed is the gateway's own"},
		{"providerSpecificData must be an object", "providerSpecificData must be an object"},
		{"a connection needs providerSpecificData {region}", "a connection needs providerSpecificData {region}"},
	}
	for _, tt := range tests {
		if got := s.UserWords(tt.in); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	var none *DataSchema
	if got := none.UserWords("providerSpecificData.x must be y"); got != "providerSpecificData.x must be y" {
		t.Errorf("no schema: %q", got)
	}
}
