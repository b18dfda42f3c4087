package pricing

import (
	"encoding/json"

	"omniroute/backend/errs"
)

// maxModelName bounds a model name in a connection's pricing.
const maxModelName = 256

// ReadOverride applies a connection's pricing and flatRate fields, as the
// management API takes them, to o: pricing replaces the connection's prices
// (null or {} removes them), flatRate sets the marker (null returns to the
// provider's default); a nil field leaves o's. A bad field is
// INVALID_PRICING or INVALID_FLAT_RATE naming it, o returned unchanged.
func ReadOverride(o Override, rawPricing, rawFlatRate json.RawMessage) (Override, error) {
	out := o
	if rawPricing != nil {
		var p map[string]Price
		if err := json.Unmarshal(rawPricing, &p); err != nil {
			return o, errs.New(errs.Invalid, "INVALID_PRICING", "pricing must map model names to {inputPerMTok, outputPerMTok, cachedInputPerMTok?, cacheWritePerMTok?}").WithParam("pricing")
		}
		for model, price := range p {
			if model == "" || len(model) > maxModelName {
				return o, errs.New(errs.Invalid, "INVALID_PRICING", "pricing: model names must be 1 to %d characters", maxModelName).WithParam("pricing")
			}
			if err := price.Validate(); err != nil {
				if len(model) > 40 {
					model = model[:40]
				}
				return o, errs.New(errs.Invalid, "INVALID_PRICING", "pricing[%q]: %v", model, err).WithParam("pricing")
			}
		}
		out.Pricing = p
	}
	if rawFlatRate != nil {
		var f *bool
		if err := json.Unmarshal(rawFlatRate, &f); err != nil {
			return o, errs.New(errs.Invalid, "INVALID_FLAT_RATE", "flatRate must be true, false or null").WithParam("flatRate")
		}
		out.FlatRate = f
	}
	return out, nil
}

// Empty reports an override that sets nothing (a connection priced at the
// catalogue's prices, with its provider's flat-rate default).
func (o Override) Empty() bool { return o.FlatRate == nil && len(o.Pricing) == 0 }
