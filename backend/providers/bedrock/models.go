package bedrock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
)

// The model lists discovery reads, on Bedrock's control plane: the
// foundation models that answer text on demand, and the cross-region
// inference profiles (us.…, eu.…) that route them.
const (
	FoundationModelsPath  = "/foundation-models?byInferenceType=ON_DEMAND&byOutputModality=TEXT"
	InferenceProfilesPath = "/inference-profiles?maxResults=1000"
)

// ControlEndpoint is a region's Bedrock control-plane endpoint.
func ControlEndpoint(region string) string { return "https://bedrock." + region + ".amazonaws.com" }

// ListRequest builds a signed GET of a model list path. The control plane
// is the region's unless the connection's base URL is not the runtime
// default (a test fake, a proxy), which then serves both.
func ListRequest(ctx context.Context, t providers.Target, path, userAgent string, now time.Time) (*http.Request, error) {
	base := strings.TrimRight(t.BaseURL, "/")
	if base == "" || base == Endpoint(t.AWS.Region) {
		base = ControlEndpoint(t.AWS.Region)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	empty := sha256.Sum256(nil)
	creds := aws.Credentials{AccessKeyID: t.AWS.AccessKeyID, SecretAccessKey: t.AWS.SecretAccessKey, SessionToken: t.AWS.SessionToken}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(empty[:]), "bedrock", t.AWS.Region, now); err != nil {
		return nil, err
	}
	return req, nil
}

// ParseModels reads the model ids of either list
// ({modelSummaries:[{modelId}]} or {inferenceProfileSummaries:[{inferenceProfileId}]});
// ok is false when the body is neither.
func ParseModels(body []byte) (ids []string, ok bool) {
	if !gjson.ValidBytes(body) {
		return nil, false
	}
	root := gjson.ParseBytes(body)
	for _, l := range [...]struct{ list, id string }{{"modelSummaries", "modelId"}, {"inferenceProfileSummaries", "inferenceProfileId"}} {
		if arr := root.Get(l.list); arr.IsArray() {
			arr.ForEach(func(_, m gjson.Result) bool {
				if id := m.Get(l.id).String(); id != "" {
					ids = append(ids, id)
				}
				return true
			})
			return ids, true
		}
	}
	return nil, false
}
