package connfields

import (
	"encoding/json"
	"math"
	"strings"

	"omniroute/backend/errs"
)

// Bounds of the concurrency caps a connection may declare.
const (
	maxConcurrencyCap = 10_000
	maxModelCaps      = 1_000
)

func orObject(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// MergeOverrides applies a PATCH's rateLimitOverrides to the stored object,
// key by key; a null value removes the key.
func MergeOverrides(stored string, patch json.RawMessage) (json.RawMessage, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return nil, errs.New(errs.Invalid, "INVALID_FIELD", "rateLimitOverrides must be a JSON object").WithParam("rateLimitOverrides")
	}
	var base map[string]json.RawMessage
	_ = json.Unmarshal([]byte(orObject(stored)), &base)
	if base == nil {
		base = map[string]json.RawMessage{}
	}
	for k, v := range p {
		if string(v) == "null" {
			delete(base, k)
			continue
		}
		base[k] = v
	}
	b, _ := json.Marshal(base)
	return b, nil
}

// validateOverrides checks the rateLimitOverrides keys the gate and the queue
// read (guide §4–§5): caps are whole numbers, modelConcurrency maps exact
// upstream model ids to positive caps, waits and pacing are non-negative
// (waits clamp to 1 ms–24 h when applied).
func validateOverrides(raw string) error {
	var o map[string]any
	if err := json.Unmarshal([]byte(orObject(raw)), &o); err != nil {
		return errs.New(errs.Invalid, "INVALID_FIELD", "rateLimitOverrides must be a JSON object").WithParam("rateLimitOverrides")
	}
	bad := func(field, msg string) error {
		return errs.New(errs.Invalid, "INVALID_RATE_LIMIT_OVERRIDES", "rateLimitOverrides.%s %s", field, msg).WithParam("rateLimitOverrides." + field)
	}
	whole := func(v any, lo, hi float64) bool {
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && f >= lo && f <= hi
	}
	if v, ok := o["maxConcurrent"]; ok && v != nil && !whole(v, 0, maxConcurrencyCap) {
		return bad("maxConcurrent", "must be a whole number from 0 (no cap) to 10000")
	}
	if v, ok := o["modelConcurrency"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return bad("modelConcurrency", "must be an object of exact upstream model id → cap, e.g. {\"glm-5\":1}")
		}
		if len(m) > maxModelCaps {
			return bad("modelConcurrency", "may name at most 1000 models")
		}
		for model, n := range m {
			if strings.TrimSpace(model) == "" || len(model) > 200 || strings.TrimSpace(model) != model {
				return bad("modelConcurrency", "keys must be model ids of 1 to 200 characters without surrounding spaces")
			}
			if !whole(n, 1, maxConcurrencyCap) {
				return bad("modelConcurrency", "caps must be whole numbers from 1 to 10000 (remove a model to lift its cap); "+truncate(model, 60)+" is not")
			}
		}
	}
	for _, f := range []string{"maxWaitMs", "executionMaxWaitMs", "minTimeMs"} {
		if v, ok := o[f]; ok && v != nil && !whole(v, 0, 1e12) {
			return bad(f, "must be a whole number of milliseconds (clamped to 1 ms–24 h)")
		}
	}
	if v, ok := o["requestsPerMinute"]; ok && v != nil {
		if f, isNum := v.(float64); !isNum || f < 0 || f > 1e6 {
			return bad("requestsPerMinute", "must be a number from 0 (no pacing) to 1000000")
		}
	}
	return nil
}
