package connfields

import (
	"encoding/json"
	"slices"
	"strings"

	"omniroute/backend/errs"
	"omniroute/backend/providers/discovery"
	"omniroute/backend/routing"
	"omniroute/backend/store"
)

// modelList validates a list of model names and returns it as JSON, without
// duplicates.
func modelList(in []string, field string) (string, error) {
	if len(in) > discovery.MaxModels {
		return "", errs.New(errs.Invalid, "INVALID_MODELS", "%s may hold at most %d names", field, discovery.MaxModels).WithParam(field)
	}
	models := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, m := range in {
		name, ok := discovery.Clean(m)
		if !ok {
			return "", errs.New(errs.Invalid, "INVALID_MODELS", "%s must be names of 1 to 200 characters without spaces", field).WithParam(field)
		}
		if !seen[name] {
			seen[name] = true
			models = append(models, name)
		}
	}
	b, _ := json.Marshal(models)
	return string(b), nil
}

// maxAliases bounds a connection's model aliases.
const maxAliases = 1000

// aliasMap validates a connection's model aliases (alias → model) and
// returns them as JSON: both names as clean as model names, an alias without
// '/' (that would read as provider/model) and never its own model.
func aliasMap(in map[string]string) (string, error) {
	if len(in) > maxAliases {
		return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "modelAliases may hold at most %d aliases", maxAliases).WithParam("modelAliases")
	}
	out := make(map[string]string, len(in))
	for alias, model := range in {
		a, ok := discovery.Clean(alias)
		if !ok || strings.Contains(a, "/") {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "alias %q must be 1 to 200 characters without spaces or '/'", truncate(alias, 60)).WithParam("modelAliases")
		}
		m, ok := discovery.Clean(model)
		if !ok {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "the model of alias %q must be a name of 1 to 200 characters without spaces", a).WithParam("modelAliases")
		}
		if a == m {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "alias %q names itself", a).WithParam("modelAliases")
		}
		if _, dup := out[a]; dup {
			return "", errs.New(errs.Invalid, "INVALID_MODEL_ALIASES", "alias %q is given twice", a).WithParam("modelAliases")
		}
		out[a] = m
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}

// checkAliases refuses aliases that would be ambiguous or dead on row: an
// alias that is also a model the connection knows, or one whose model is
// hidden there.
func checkAliases(row store.Connection) error {
	aliases := routing.ModelAliases(row)
	if len(aliases) == 0 {
		return nil
	}
	known := routing.KnownModels(row)
	hidden := routing.HiddenModels(row)
	keys := make([]string, 0, len(aliases))
	for k := range aliases {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, a := range keys {
		if slices.Contains(known, a) {
			return errs.New(errs.Invalid, "MODEL_ALIAS_CONFLICT", "alias %q is already a model of this connection", a).WithParam("modelAliases")
		}
		if slices.Contains(hidden, aliases[a]) {
			return errs.New(errs.Invalid, "MODEL_ALIAS_HIDDEN", "alias %q names %q, which is hidden on this connection", a, aliases[a]).WithParam("modelAliases")
		}
	}
	return nil
}
