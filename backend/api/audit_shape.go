package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// auditRefusal records a management write that was refused before it ran
// (a role too low, a forged cross-origin request): who tried what, with the
// refusal's code. Its body is not read: what was refused changed nothing.
func (a *API) auditRefusal(r *http.Request, p principal, err error) {
	e := errs.As(err)
	detail := map[string]any{"refused": e.Code}
	if vars := mux.Vars(r); len(vars) > 0 {
		detail["vars"] = vars
	}
	b, _ := json.Marshal(detail)
	a.recordAudit(r, p, routeKey(r), httpx.Status(e.Class), string(b))
}

// auditShape is a body too long for an entry, told structurally: every field
// by its path ("scopes[]", "limits.rpm"), each with its distinct values,
// shortened until the whole fits auditDetailMax. Values are cut before the
// fields are, so no changed field is hidden by the cut (a value padded long
// cannot push a short one out), and the last resort keeps every field's name.
func auditShape(vars map[string]string, body any) string {
	fields := map[string]*auditValues{}
	flattenAudit("", body, fields)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, lim := range []struct{ values, chars int }{{32, 200}, {32, 60}, {16, 32}, {8, 24}, {4, 16}, {1, 12}} {
		shown := make(map[string]any, len(names))
		for _, n := range names {
			vals := fields[n].list
			cut := make([]string, 0, min(len(vals), lim.values))
			for _, v := range vals[:min(len(vals), lim.values)] {
				cut = append(cut, truncateRunes(v, lim.chars))
			}
			if len(vals) > lim.values {
				cut = append(cut, "… "+strconv.Itoa(len(vals)-lim.values)+" more")
			}
			shown[n] = cut
		}
		if b := auditJSON(vars, "fields", shown); len(b) <= auditDetailMax {
			return string(b)
		}
	}
	for len(names) > 0 { // names only, as many as fit
		if b := auditJSON(vars, "fieldNames", names); len(b) <= auditDetailMax {
			return string(b)
		}
		names = names[:len(names)*3/4]
	}
	return string(auditJSON(vars, "fieldNames", []string{}))
}

func auditJSON(vars map[string]string, key string, v any) []byte {
	out := map[string]any{"truncated": true, key: v}
	if len(vars) > 0 {
		out["vars"] = vars
	}
	b, _ := json.Marshal(out)
	return b
}

// flattenAudit collects every leaf of v under its path, each distinct value
// once (an array's elements share the path name[]).
func flattenAudit(path string, v any, into map[string]*auditValues) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			addAuditValue(into, path, "{}")
		}
		for k, x := range t {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flattenAudit(p, x, into)
		}
	case []any:
		if len(t) == 0 {
			addAuditValue(into, path+"[]", "[]")
		}
		for _, x := range t {
			flattenAudit(path+"[]", x, into)
		}
	case string:
		addAuditValue(into, path, t)
	default:
		b, _ := json.Marshal(t)
		addAuditValue(into, path, string(b))
	}
}

// auditValues are one path's distinct values, in the body's order.
type auditValues struct {
	list []string
	seen map[string]struct{}
}

func addAuditValue(into map[string]*auditValues, path, v string) {
	if path == "" {
		path = "."
	}
	av := into[path]
	if av == nil {
		av = &auditValues{seen: map[string]struct{}{}}
		into[path] = av
	}
	if _, ok := av.seen[v]; !ok {
		av.seen[v] = struct{}{}
		av.list = append(av.list, v)
	}
}

// truncateRunes cuts s to at most n bytes on a character boundary, marking
// the cut.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
