package config_test

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"omniroute/backend/config"
)

// catalogueFile is the Settings page's list of settings (issue 42 item 9).
const catalogueFile = "../../frontend/src/lib/settings-catalogue.json"

type catalogueEntry struct {
	Key         string          `json:"key"`
	Group       string          `json:"group"`
	Label       string          `json:"label"`
	Kind        string          `json:"kind"`
	Description string          `json:"description"`
	Default     json.RawMessage `json:"default"`
	Options     []string        `json:"options"`
	Link        *struct {
		Page  string `json:"page"`
		Label string `json:"label"`
	} `json:"link"`
}

// settingLeaves flattens a settings document (GET /api/settings) into its
// dotted keys: an object's fields are keys of their own, anything else
// (numbers, strings, lists, null) is a leaf.
func settingLeaves(prefix string, v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		out[prefix] = v
		return
	}
	if prefix != "" {
		out[prefix] = v
	}
	for k, sub := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		settingLeaves(key, sub, out)
	}
}

// TestEverySettingHasAPlaceOnTheSettingsPage: every key GET /api/settings
// returns (the marshalled defaults: the same document) has an entry on the
// Settings page's list, or an ancestor entry that sends it to another page,
// with a label, a description, a known group and kind and the gateway's
// default; an entry naming a key the API does not have fails too. A new
// setting cannot ship without a place and a meaning.
func TestEverySettingHasAPlaceOnTheSettingsPage(t *testing.T) {
	raw, err := os.ReadFile(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Groups   []string         `json:"groups"`
		Settings []catalogueEntry `json:"settings"`
	}
	if err := json.Unmarshal(raw, &cat); err != nil {
		t.Fatalf("%s: %v", catalogueFile, err)
	}
	doc, err := json.Marshal(config.DefaultGeneral())
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(doc, &generic); err != nil {
		t.Fatal(err)
	}
	leaves := map[string]any{}
	settingLeaves("", generic, leaves)

	groups := map[string]bool{}
	for _, g := range cat.Groups {
		groups[g] = true
	}
	kinds := map[string]bool{"bool": true, "int": true, "ms": true, "bytes": true, "text": true, "enum": true, "list": true, "page": true}
	byKey := map[string]catalogueEntry{}
	for _, e := range cat.Settings {
		if _, dup := byKey[e.Key]; dup {
			t.Errorf("%s is listed twice", e.Key)
		}
		byKey[e.Key] = e
		def, known := leaves[e.Key]
		switch {
		case !known:
			t.Errorf("the Settings page lists %q, which GET /api/settings does not return", e.Key)
			continue
		case strings.TrimSpace(e.Label) == "" || len(strings.TrimSpace(e.Description)) < 20:
			t.Errorf("%s: no label or no real description", e.Key)
		case !groups[e.Group]:
			t.Errorf("%s: group %q is not one of %v", e.Key, e.Group, cat.Groups)
		case !kinds[e.Kind]:
			t.Errorf("%s: unknown kind %q", e.Key, e.Kind)
		case e.Kind == "page" && (e.Link == nil || e.Link.Page == ""):
			t.Errorf("%s: edited on another page, but which?", e.Key)
		case e.Kind == "enum" && len(e.Options) == 0:
			t.Errorf("%s: an enum without options", e.Key)
		}
		var got any
		if err := json.Unmarshal(e.Default, &got); err != nil || e.Default == nil {
			t.Errorf("%s: no default (%v)", e.Key, err)
		} else if !reflect.DeepEqual(got, def) {
			t.Errorf("%s: the page says the default is %s, the gateway's is %v", e.Key, e.Default, def)
		}
	}
	var missing []string
	for key := range leaves {
		placed := false
		for k := key; k != ""; {
			if _, ok := byKey[k]; ok {
				placed = true
				break
			}
			i := strings.LastIndexByte(k, '.')
			if i < 0 {
				break
			}
			k = k[:i]
		}
		// An object is placed by its fields' entries.
		if _, isObject := leaves[key].(map[string]any); isObject && !placed {
			continue
		}
		if !placed {
			missing = append(missing, key)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("settings with no place on the Settings page (add them to %s): %v", catalogueFile, missing)
	}
}
