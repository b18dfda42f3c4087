package bedrock

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"omniroute/backend/providers"
)

func seal(s string) (string, error) { return "sealed(" + s + ")", nil }

// TestDataSchemaFieldErrors: each refusal names the offending field.
func TestDataSchemaFieldErrors(t *testing.T) {
	home := t.TempDir()
	apply := Module().Data.Apply
	for _, c := range []struct {
		raw, field, code string
	}{
		{`[]`, "providerSpecificData", "INVALID_PROVIDER_DATA"},
		{`{"region":"moon-1","accessKeyId":"AKIAFAKEBEDROCK00001"}`, "providerSpecificData.region", "INVALID_PROVIDER_DATA"},
		{`{"region":"us-east-1","accessKeyId":"akia"}`, "providerSpecificData.accessKeyId", "INVALID_PROVIDER_DATA"},
		{`{"region":"us-east-1","accessKeyId":7}`, "providerSpecificData.accessKeyId", "INVALID_PROVIDER_DATA"},
		{`{"region":"us-east-1","accessKeyId":"AKIAFAKEBEDROCK00001","secretAccessKey":""}`, "providerSpecificData.secretAccessKey", "INVALID_PROVIDER_DATA"},
		{`{"region":"us-east-1","accessKeyId":"AKIAFAKEBEDROCK00001","sessionTokenSealed":"x"}`, "providerSpecificData.sessionTokenSealed", "INVALID_PROVIDER_DATA"},
		{`{"profile":"nobody"}`, "providerSpecificData.profile", "AWS_PROFILE_NOT_FOUND"},
		{`{"profile":"../etc"}`, "providerSpecificData.profile", "INVALID_PROVIDER_DATA"},
	} {
		_, err := apply(providers.DataInput{Raw: c.raw, Seal: seal, Home: func() (string, error) { return home, nil }})
		var fe *providers.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Code != c.code {
			t.Errorf("%s: %v, want %s on %s", c.raw, err, c.code, c.field)
		}
	}
}

// TestDataSchemaSealsSecrets: the secret key goes to the API key column,
// the session token into sessionTokenSealed, kept by an edit without one;
// a profile fills what the object leaves out.
func TestDataSchemaSealsSecrets(t *testing.T) {
	home := t.TempDir()
	_ = os.MkdirAll(filepath.Join(home, ".aws"), 0o700)
	_ = os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("[dev]\naws_access_key_id = AKIAFAKEBEDROCK00002\naws_secret_access_key = s3cret\n"), 0o600)
	_ = os.WriteFile(filepath.Join(home, ".aws", "config"), []byte("[profile dev]\nregion = eu-west-1\n"), 0o600)
	apply := Module().Data.Apply
	in := providers.DataInput{Seal: seal, Home: func() (string, error) { return home, nil }}
	in.Raw = `{"region":"us-east-1","accessKeyId":"AKIAFAKEBEDROCK00001","secretAccessKey":"key-1","sessionToken":"tok-1"}`
	out, err := apply(in)
	if err != nil || out.APIKeySealed != "sealed(key-1)" || strings.Contains(out.Data, "key-1") || !strings.Contains(out.Data, `"sessionTokenSealed":"sealed(tok-1)"`) || strings.Contains(out.Data, `"sessionToken":`) {
		t.Fatalf("create: %v %+v", err, out)
	}
	in.Stored, in.Raw = out.Data, `{"region":"us-west-2","accessKeyId":"AKIAFAKEBEDROCK00001"}`
	edit, err := apply(in)
	if err != nil || edit.APIKeySealed != "" || !strings.Contains(edit.Data, `"sessionTokenSealed":"sealed(tok-1)"`) || !strings.Contains(edit.Data, "us-west-2") {
		t.Fatalf("edit: %v %+v", err, edit)
	}
	in.Stored, in.Raw = "", `{"profile":"dev"}`
	prof, err := apply(in)
	var d map[string]any
	_ = json.Unmarshal([]byte(prof.Data), &d)
	if err != nil || prof.APIKeySealed != "sealed(s3cret)" || d["region"] != "eu-west-1" || d["accessKeyId"] != "AKIAFAKEBEDROCK00002" {
		t.Fatalf("profile: %v %+v", err, prof)
	}
}

// TestConnect: a stored connection's region picks the endpoint; the sealed
// session token is opened; one that cannot be opened is an error.
func TestConnect(t *testing.T) {
	open := func(s string) (string, error) {
		if s == "bad" {
			return "", errors.New("wrong key")
		}
		return strings.TrimPrefix(s, "sealed:"), nil
	}
	cd, err := Module().Connect(providers.ConnInput{Data: `{"region":"eu-west-1","accessKeyId":"AKIA1","sessionTokenSealed":"sealed:tok"}`, Secret: "sk", Open: open})
	if err != nil || cd.BaseURL != Endpoint("eu-west-1") || cd.Parts.AWS != (providers.AWS{Region: "eu-west-1", AccessKeyID: "AKIA1", SecretAccessKey: "sk", SessionToken: "tok"}) {
		t.Fatalf("%v %+v", err, cd)
	}
	if _, err := Module().Connect(providers.ConnInput{Data: `{"region":"eu-west-1","sessionTokenSealed":"bad"}`, Open: open}); err == nil {
		t.Fatal("an unreadable session token is not an error")
	}
}
