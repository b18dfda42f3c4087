package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"omniroute/backend/api"
)

// rawSend sends body (nil: none) with exactly the headers given, and returns
// the status and error code.
func (e *env) rawSend(method, path, body string, hdr map[string]string) (int, string) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, errorCode(out)
}

// TestCookieWritesNeedTheGatewaysOwnOrigin: a write carried by the session
// cookie (SameSite=Strict, which ignores ports) is accepted only when the
// browser says same-origin (or none), or it carries the dashboard's CSRF
// header, or its Origin is exactly the gateway's scheme://host:port; and its
// body must be declared application/json. A page on another local port
// creates nothing. Bearer callers are not concerned.
func TestCookieWritesNeedTheGatewaysOwnOrigin(t *testing.T) {
	e := newEnv(t)
	e.createUser("root@example.com", api.RoleAdmin, "root-password-1")
	sess := api.SessionCookie + "=" + e.login("root@example.com", "root-password-1").Value
	own := e.ts.URL // http://127.0.0.1:PORT
	otherPort := "http://127.0.0.1:5173"
	ctJSON := "application/json"
	cases := []struct {
		name  string
		hdr   map[string]string
		ctype string // "" none
		body  bool
		want  int
		code  string
	}{
		{name: "Sec-Fetch-Site cross-site", hdr: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://localhost:8080"}, ctype: ctJSON, want: 403, code: "CSRF_REFUSED"},
		{name: "Sec-Fetch-Site same-site (another port)", hdr: map[string]string{"Sec-Fetch-Site": "same-site", "Origin": otherPort}, ctype: ctJSON, want: 403, code: "CSRF_REFUSED"},
		{name: "same-site with the CSRF header and the own Origin", hdr: map[string]string{"Sec-Fetch-Site": "same-site", api.CSRFHeader: "1", "Origin": own}, ctype: ctJSON, want: 403, code: "CSRF_REFUSED"},
		{name: "Origin on another port", hdr: map[string]string{"Origin": otherPort}, ctype: ctJSON, want: 403, code: "CSRF_REFUSED"},
		{name: "Origin localhost on another port", hdr: map[string]string{"Origin": "http://localhost:5173"}, ctype: ctJSON, want: 403, code: "CSRF_REFUSED"},
		{name: "Origin with the own port but https", hdr: map[string]string{"Origin": strings.Replace(own, "http:", "https:", 1)}, ctype: ctJSON, want: 403, code: "CSRF_REFUSED"},
		{name: "Origin null (refused before any credential)", hdr: map[string]string{"Origin": "null"}, ctype: ctJSON, want: 403, code: "ORIGIN_NOT_ALLOWED"},
		{name: "no Origin, no Sec-Fetch-Site, no header", ctype: ctJSON, want: 403, code: "CSRF_REFUSED"},
		{name: "no content type (no-cors fetch)", hdr: map[string]string{"Sec-Fetch-Site": "same-origin"}, want: 415, code: "CONTENT_TYPE_REQUIRED"},
		{name: "text/plain body (a form)", hdr: map[string]string{"Sec-Fetch-Site": "same-origin"}, ctype: "text/plain", want: 415, code: "CONTENT_TYPE_REQUIRED"},
		{name: "form-urlencoded body", hdr: map[string]string{api.CSRFHeader: "1"}, ctype: "application/x-www-form-urlencoded", want: 415, code: "CONTENT_TYPE_REQUIRED"},
		{name: "Sec-Fetch-Site same-origin", hdr: map[string]string{"Sec-Fetch-Site": "same-origin"}, ctype: ctJSON, want: 201},
		{name: "Sec-Fetch-Site none", hdr: map[string]string{"Sec-Fetch-Site": "none"}, ctype: "application/json; charset=utf-8", want: 201},
		{name: "the CSRF header", hdr: map[string]string{api.CSRFHeader: "1"}, ctype: ctJSON, want: 201},
		{name: "the exact own Origin", hdr: map[string]string{"Origin": own}, ctype: ctJSON, want: 201},
	}
	var made []string
	for i, tc := range cases {
		email := "u" + string(rune('a'+i)) + "@example.com"
		hdr := map[string]string{"Cookie": sess}
		for k, v := range tc.hdr {
			hdr[k] = v
		}
		if tc.ctype != "" {
			hdr["Content-Type"] = tc.ctype
		}
		code, ecode := e.rawSend("POST", "/api/users", `{"email":"`+email+`","role":"admin","password":"attacker-pass-1"}`, hdr)
		if code != tc.want || ecode != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, ecode, tc.want, tc.code)
		}
		if tc.want == 201 {
			made = append(made, email)
		}
	}
	// A body-less write (DELETE) follows the same origin rule.
	e.createToken("victim", api.RoleViewer)
	_, m := e.mgmt("GET", "/api/tokens", nil)
	id := m["tokens"].([]any)[len(m["tokens"].([]any))-1].(map[string]any)["id"].(string)
	if code, ecode := e.rawSend("DELETE", "/api/tokens/"+id, "", map[string]string{"Cookie": sess, "Origin": otherPort}); code != 403 || ecode != "CSRF_REFUSED" {
		t.Fatalf("delete from another port: %d %s", code, ecode)
	}
	if code, _ := e.rawSend("DELETE", "/api/tokens/"+id, "", map[string]string{"Cookie": sess, "Sec-Fetch-Site": "same-origin"}); code != 200 {
		t.Fatalf("delete from the dashboard: %d", code)
	}
	// Reads are not writes.
	if code, _ := e.rawSend("GET", "/api/users", "", map[string]string{"Cookie": sess}); code != 200 {
		t.Fatalf("a read with the cookie: %d", code)
	}
	// Bearer callers are unaffected: no content type, an Origin on another
	// loopback port (the browser cross-origin rule is host-based for them).
	if code, ecode := e.rawSend("POST", "/api/users", `{"email":"bearer@example.com","role":"viewer"}`,
		map[string]string{"Authorization": "Bearer " + e.token, "Origin": otherPort}); code != 201 {
		t.Fatalf("bearer write: %d %s", code, ecode)
	}
	made = append(made, "bearer@example.com", "root@example.com")
	_, m = e.mgmt("GET", "/api/users", nil)
	var got []string
	for _, u := range m["users"].([]any) {
		got = append(got, u.(map[string]any)["email"].(string))
	}
	if len(got) != len(made) {
		t.Fatalf("users %v, want only %v", got, made)
	}
	// Each refusal is in the audit log.
	_, _, out := e.sendAs("GET", "/api/audit?action=POST%20/api/users&limit=100", nil, e.token, "")
	var page struct {
		Entries []struct {
			Status int
			Detail map[string]any
		}
	}
	_ = json.Unmarshal(out, &page)
	refused := 0
	for _, en := range page.Entries {
		if en.Status == 403 && en.Detail["refused"] == "CSRF_REFUSED" {
			refused++
		}
	}
	if refused != 7 {
		t.Fatalf("%d CSRF refusals audited, want 7: %s", refused, out)
	}
}

// TestLoginTakesOnlyJSONAndAtMost72Bytes: a sign-in whose body is not
// declared JSON is 415 (a form of another page cannot sign the browser in),
// and a password past bcrypt's 72 bytes is 400, not a sign-in with any tail.
func TestLoginTakesOnlyJSONAndAtMost72Bytes(t *testing.T) {
	e := newEnv(t)
	pw := strings.Repeat("p", 72)
	e.createUser("long@example.com", api.RoleAdmin, pw)
	body := `{"email":"long@example.com","password":"` + pw + `"}`
	if code, ecode := e.rawSend("POST", "/api/login", body, map[string]string{"Content-Type": "text/plain"}); code != 415 || ecode != "CONTENT_TYPE_REQUIRED" {
		t.Fatalf("text/plain login: %d %s", code, ecode)
	}
	if code, ecode := e.rawSend("POST", "/api/login", body, nil); code != 415 || ecode != "CONTENT_TYPE_REQUIRED" {
		t.Fatalf("login without content type: %d %s", code, ecode)
	}
	tail := `{"email":"long@example.com","password":"` + pw + `-any-tail"}`
	if code, ecode := e.rawSend("POST", "/api/login", tail, map[string]string{"Content-Type": "application/json"}); code != 400 || ecode != "INVALID_PASSWORD" {
		t.Fatalf("73+ byte password: %d %s", code, ecode)
	}
	if code, ecode := e.rawSend("POST", "/api/login", body, map[string]string{"Content-Type": "application/json"}); code != 200 {
		t.Fatalf("the 72-byte password: %d %s", code, ecode)
	}
	if code, m := e.mgmt("POST", "/api/users", map[string]any{"email": "x@example.com", "role": "viewer", "password": pw + "x"}); code != 400 {
		t.Fatalf("73-byte password on create: %d %v", code, m)
	}
}
