package pricing

import (
	"errors"
	"reflect"
	"testing"
)

// values is a key_value namespace as the store holds it.
type values struct {
	ns  map[string]map[string]string
	err error
}

func (v values) Values(namespace string) (map[string]string, error) { return v.ns[namespace], v.err }

func TestLoad(t *testing.T) {
	yes, no := true, false
	before := map[string]Override{"old": {FlatRate: &yes}}
	for _, tc := range []struct {
		name   string
		src    values
		want   map[string]Override
		failed bool
	}{
		{name: "overrides replace the table's", src: values{ns: map[string]map[string]string{Namespace: {
			"c1": `{"pricing":{"m":{"inputPerMTok":1,"outputPerMTok":2}}}`,
			"c2": `{"flatRate":false}`,
		}}}, want: map[string]Override{"c1": {Pricing: map[string]Price{"m": {InputPerMTok: 1, OutputPerMTok: 2}}}, "c2": {FlatRate: &no}}},
		{name: "damaged and empty ones skipped", src: values{ns: map[string]map[string]string{Namespace: {
			"bad": `{"pricing":`, "empty": `{}`, "nulls": `{"pricing":null,"flatRate":null}`, "ok": `{"flatRate":true}`,
		}}}, want: map[string]Override{"ok": {FlatRate: &yes}}},
		{name: "other namespaces ignored", src: values{ns: map[string]map[string]string{"settings": {"c1": `{"flatRate":true}`}}},
			want: map[string]Override{}},
		{name: "a read error keeps the table", src: values{err: errors.New("db down")}, want: before, failed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := New(nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			tb.ReplaceOverrides(before)
			if err := Load(tc.src, tb); (err != nil) != tc.failed {
				t.Fatalf("err = %v, want failed %v", err, tc.failed)
			}
			if got := tb.Overrides(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("overrides %+v, want %+v", got, tc.want)
			}
		})
	}
}
