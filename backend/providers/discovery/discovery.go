// Package discovery asks an upstream which models it serves: GET <base>/models
// with the connection's credentials, read in OpenAI's shape ({data:[{id}]}),
// Anthropic's ({data:[{id,display_name}], has_more, last_id}, paged) or
// Gemini's native one ({models:[{name:"models/…"}], nextPageToken}, paged,
// the key in x-goog-api-key). When the
// upstream cannot answer, the catalogue's default list for the provider stands
// in, so a known provider always has names to route.
package discovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/tidwall/gjson"

	"omniroute/backend/providers"
	"omniroute/backend/providers/anthropic"
	"omniroute/backend/providers/gemini"
	"omniroute/backend/providers/openai"
)

// Sources of a model list.
const (
	// SourceUpstream: the upstream's GET /models answered.
	SourceUpstream = "upstream"
	// SourceCatalog: discovery failed and the catalogue's default list stands in.
	SourceCatalog = "catalog"
)

// Limits that keep a misbehaving upstream from filling memory or the database.
const (
	// MaxModels caps one connection's discovered list.
	MaxModels = 5000
	// MaxNameLen is the longest model name kept (the API accepts 200).
	MaxNameLen = 200
	// maxPages bounds Anthropic-style paging.
	maxPages = 20
	// maxBody bounds one page's body.
	maxBody = 8 << 20
)

// Error codes of a failed discovery (Error.Code).
const (
	CodeUnreachable = "UPSTREAM_UNREACHABLE"
	CodeStatus      = "UPSTREAM_STATUS"
	CodeInvalidBody = "INVALID_MODELS_BODY"
	CodeEmpty       = "NO_MODELS"
)

// Error says why an upstream's model list could not be read. Its message never
// contains a credential.
type Error struct {
	Code    string
	Status  int // upstream HTTP status for CodeStatus
	Message string
}

func (e *Error) Error() string { return e.Message }

// Client lists models over a shared HTTP client.
type Client struct {
	HTTP      *http.Client
	UserAgent string
	// Now signs the list requests of providers that sign them (nil: time.Now).
	Now func() time.Time
}

// Result is one discovery's outcome.
type Result struct {
	// Models are the names found (upstream) or the catalogue defaults.
	Models []string
	// Source is SourceUpstream or SourceCatalog ("" when neither gave a name).
	Source string
	// Err is why the upstream did not answer (nil when it did).
	Err *Error
}

// Discover lists t's models and falls back to the catalogue's defaults for
// t.Provider when the upstream cannot answer or answers an empty list.
func (c *Client) Discover(ctx context.Context, t providers.Target) Result {
	if t.Provider.NoModelList && len(t.Provider.DefaultModels) > 0 {
		// Nothing to ask: the upstream has no model list route.
		return Result{Models: append([]string(nil), t.Provider.DefaultModels...), Source: SourceCatalog}
	}
	models, err := c.List(ctx, t)
	if err == nil {
		return Result{Models: models, Source: SourceUpstream}
	}
	var de *Error
	if !errors.As(err, &de) {
		de = &Error{Code: CodeUnreachable, Message: "upstream unreachable"}
	}
	res := Result{Err: de}
	if len(t.Provider.DefaultModels) > 0 {
		res.Models = append([]string(nil), t.Provider.DefaultModels...)
		res.Source = SourceCatalog
	}
	if m := ownModels(t); len(m) > 0 {
		// A connection that names its own models (a resource's deployments
		// map, whose list route newer API versions dropped) serves them.
		res.Models, res.Source = m, SourceCatalog
	}
	return res
}

// listModule reads a provider module's own model lists, in order (a
// failure of a later one keeps the names of the earlier ones).
func (c *Client) listModule(ctx context.Context, t providers.Target, ml *providers.ModelList) ([]string, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	reqs, err := ml.Requests(ctx, t, c.UserAgent, now())
	if err != nil {
		return nil, &Error{Code: CodeUnreachable, Message: "invalid base URL or credentials"}
	}
	var out []string
	seen := map[string]bool{}
	for i, req := range reqs {
		body, err := c.fetch(req)
		if err != nil {
			if i > 0 {
				break
			}
			return nil, err
		}
		ids, ok := ml.Parse(body)
		if !ok {
			if i > 0 {
				break
			}
			if !gjson.ValidBytes(body) {
				return nil, &Error{Code: CodeInvalidBody, Message: "the model list is not JSON"}
			}
			return nil, &Error{Code: CodeInvalidBody, Message: "the model list has no " + ml.Shape}
		}
		for _, id := range ids {
			if n, ok := Clean(id); ok && !seen[n] && len(out) < MaxModels {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, m := range ownModels(t) {
		if len(out) < MaxModels && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, &Error{Code: CodeEmpty, Message: "the upstream listed no models"}
	}
	return out, nil
}

// ownModels are the model names t's connection names itself (its
// provider module's OwnModels), sorted.
func ownModels(t providers.Target) []string {
	if t.Provider.Module == nil || t.Provider.Module.OwnModels == nil {
		return nil
	}
	names := t.Provider.Module.OwnModels(t)
	out := make([]string, 0, len(names))
	for _, m := range names {
		if n, ok := Clean(m); ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// List asks the upstream for its models. It returns an *Error on failure.
func (c *Client) List(ctx context.Context, t providers.Target) ([]string, error) {
	if m := t.Provider.Module; m != nil && m.Models != nil {
		return c.listModule(ctx, t, m.Models)
	}
	var out []string
	seen := map[string]bool{}
	after := ""
	for page := 0; page < maxPages; page++ {
		var req *http.Request
		var err error
		switch t.Provider.Format {
		case providers.FormatAnthropic:
			req, err = anthropic.ModelsRequest(ctx, t, c.UserAgent, after)
		case providers.FormatGemini:
			req, err = gemini.ModelsRequest(ctx, t, c.UserAgent, after)
		default:
			req, err = openai.ModelsRequest(ctx, t, c.UserAgent)
		}
		if err != nil {
			return nil, &Error{Code: CodeUnreachable, Message: "invalid base URL"}
		}
		body, err := c.fetch(req)
		if err != nil {
			return nil, err
		}
		names, more, last, err := parse(body)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if len(out) < MaxModels && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		paged := t.Provider.Format == providers.FormatAnthropic || t.Provider.Format == providers.FormatGemini
		if !more || last == "" || last == after || !paged || len(out) >= MaxModels {
			break
		}
		after = last
	}
	for _, m := range ownModels(t) {
		if len(out) < MaxModels && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, &Error{Code: CodeEmpty, Message: "the upstream listed no models"}
	}
	return out, nil
}

func (c *Client) fetch(req *http.Request) ([]byte, error) {
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, &Error{Code: CodeUnreachable, Message: "upstream did not answer in time"}
		}
		return nil, &Error{Code: CodeUnreachable, Message: "upstream unreachable"}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, &Error{Code: CodeUnreachable, Message: "upstream closed the connection while listing models"}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("GET /models answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			msg += ": check the connection's key"
		case http.StatusNotFound:
			msg += ": this upstream has no model list; add model names by hand"
		}
		return nil, &Error{Code: CodeStatus, Status: resp.StatusCode, Message: msg}
	}
	if len(body) > maxBody {
		return nil, &Error{Code: CodeInvalidBody, Message: "the model list is larger than 8 MiB"}
	}
	return body, nil
}

// ParseList reads an OpenAI-shaped model list (what parse reads), for a
// provider module whose list is one (ModelList.Parse).
func ParseList(body []byte) ([]string, bool) {
	names, _, _, err := parse(body)
	return names, err == nil
}

// parse reads one page: OpenAI's and Anthropic's {data:[{id}]}, the
// {models:[{name|id}]} shape of Gemini's and Ollama's native lists, and a
// bare [{id}] array (Together).
func parse(body []byte) (names []string, hasMore bool, lastID string, err error) {
	if !gjson.ValidBytes(body) {
		return nil, false, "", &Error{Code: CodeInvalidBody, Message: "the model list is not JSON"}
	}
	root := gjson.ParseBytes(body)
	list := root.Get("data")
	if !list.IsArray() {
		list = root.Get("models")
	}
	if !list.IsArray() && root.IsArray() {
		list = root // Together's bare [{id}] array
	}
	if !list.IsArray() {
		return nil, false, "", &Error{Code: CodeInvalidBody, Message: `the model list has no "data" array`}
	}
	list.ForEach(func(_, m gjson.Result) bool {
		id := m.Get("id").String()
		if id == "" {
			id = m.Get("name").String()
		}
		if id == "" && m.Type == gjson.String {
			id = m.String()
		}
		if n, ok := Clean(strings.TrimPrefix(id, "models/")); ok {
			names = append(names, n)
		}
		return true
	})
	if tok := root.Get("nextPageToken").String(); tok != "" {
		return names, true, tok, nil // Gemini pages with a token
	}
	return names, root.Get("has_more").Bool(), root.Get("last_id").String(), nil
}

// Clean trims a model name and reports whether it is usable: 1 to MaxNameLen
// characters without spaces or control characters.
func Clean(name string) (string, bool) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > MaxNameLen {
		return "", false
	}
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", false
	}
	return name, true
}
