package gemini

import (
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"omniroute/backend/jsonv"
)

// QuotaScope says which quota window a RESOURCE_EXHAUSTED error names.
type QuotaScope int

// Quota scopes, from Google's QuotaFailure / ErrorInfo details.
const (
	QuotaUnknown   QuotaScope = iota // no quota detail, or one naming no window
	QuotaPerMinute                   // a per-minute (or per-second) rate: wait and retry
	QuotaPerDay                      // a daily quota: exhausted until it resets
)

// String names the scope for logs and tests.
func (q QuotaScope) String() string {
	switch q {
	case QuotaPerMinute:
		return "per-minute"
	case QuotaPerDay:
		return "per-day"
	}
	return "unknown"
}

// maxRetryDelay bounds a RetryInfo delay: a larger value is read as this.
const maxRetryDelay = 48 * time.Hour

// APIError is a Google API error body, as generativelanguage answers:
//
//	{"error":{"code":429,"message":"…","status":"RESOURCE_EXHAUSTED","details":[
//	  {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"},
//	  {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"…PerDay…"}]}]}}
type APIError struct {
	Code       int    // error.code, the HTTP status Google meant
	Status     string // error.status, a google.rpc.Code name such as "RESOURCE_EXHAUSTED"
	Message    string
	RetryDelay time.Duration // from google.rpc.RetryInfo; 0 when absent
	HasRetry   bool          // a RetryInfo detail was present
	Quota      QuotaScope
	QuotaIDs   []string // QuotaFailure violations' quotaId (or ErrorInfo quota_limit), in order
	Reason     string   // google.rpc.ErrorInfo reason, e.g. "API_KEY_INVALID"
}

// ParseError reads a Google error body: {"error":{…}}, or the same inside a
// one-element array (how streamGenerateContent without alt=sse reports an
// error). ok is false when body is not such an error. The bytes are untrusted
// and validated with jsonv before anything is read.
func ParseError(body []byte) (e APIError, ok bool) {
	if !jsonv.Valid(body) {
		return APIError{}, false
	}
	root := gjson.ParseBytes(body)
	if root.IsArray() {
		root = root.Get("0")
	}
	eo := root.Get("error")
	if !eo.IsObject() {
		return APIError{}, false
	}
	if c := eo.Get("code"); c.Type == gjson.Number && c.Float() >= 100 && c.Float() < 600 {
		e.Code = int(c.Float())
	}
	e.Status = eo.Get("status").String()
	e.Message = eo.Get("message").String()
	var windows []string
	each(eo.Get("details"), func(_ int, d gjson.Result) bool {
		typ := d.Get(`@type`).String()
		switch {
		case strings.HasSuffix(typ, "google.rpc.RetryInfo"):
			if dl, ok := parseDuration(d.Get("retryDelay").String()); ok {
				e.RetryDelay, e.HasRetry = dl, true
			}
		case strings.HasSuffix(typ, "google.rpc.QuotaFailure"):
			each(d.Get("violations"), func(_ int, v gjson.Result) bool {
				id := v.Get("quotaId").String()
				if id != "" {
					e.QuotaIDs = append(e.QuotaIDs, id)
				}
				windows = append(windows, id, v.Get("quotaMetric").String(), v.Get("description").String())
				return true
			})
		case strings.HasSuffix(typ, "google.rpc.ErrorInfo"):
			e.Reason = d.Get("reason").String()
			if l := d.Get("metadata.quota_limit").String(); l != "" {
				e.QuotaIDs = append(e.QuotaIDs, l)
				windows = append(windows, l)
			}
		}
		return true
	})
	e.Quota = quotaScope(windows)
	if e.Quota == QuotaUnknown && e.Status == "RESOURCE_EXHAUSTED" {
		e.Quota = quotaScope([]string{e.Message})
	}
	if e.Status == "" && e.Code == 0 && e.Message == "" {
		return APIError{}, false
	}
	return e, true
}

// quotaScope reads quota ids, metrics and messages: any daily window makes the
// scope per-day (it outlasts a minute's), else any minute or second window
// per-minute.
func quotaScope(texts []string) QuotaScope {
	scope := QuotaUnknown
	for _, t := range texts {
		l := strings.ToLower(t)
		l = strings.NewReplacer(" ", "", "_", "", "-", "").Replace(l)
		switch {
		case strings.Contains(l, "perday"), strings.Contains(l, "daily"):
			return QuotaPerDay
		case strings.Contains(l, "perminute"), strings.Contains(l, "persecond"):
			scope = QuotaPerMinute
		}
	}
	return scope
}

// parseDuration reads a google.protobuf.Duration in JSON ("37s", "0.5s",
// "1.000340s"), bounded to [0, maxRetryDelay].
func parseDuration(s string) (time.Duration, bool) {
	num, found := strings.CutSuffix(strings.TrimSpace(s), "s")
	if !found || num == "" || strings.Trim(num, "0123456789.") != "" || strings.Count(num, ".") > 1 || num == "." {
		return 0, false
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	if f >= maxRetryDelay.Seconds() {
		return maxRetryDelay, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// StatusFor returns the google.rpc.Code name Google uses with an HTTP status.
func StatusFor(httpStatus int) string {
	switch httpStatus {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 412:
		return "FAILED_PRECONDITION"
	case 413:
		return "INVALID_ARGUMENT"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if httpStatus >= 500 {
		return "INTERNAL"
	}
	if httpStatus >= 400 {
		return "INVALID_ARGUMENT"
	}
	return "UNKNOWN"
}

// AppendError appends a Google-shaped error body for a Gemini-native client:
// {"error":{"code":…,"message":…,"status":…}}, with a RetryInfo detail when
// retryAfter > 0 (whole seconds, rounded up, as Google writes them). An empty
// status is derived from httpStatus.
func AppendError(dst []byte, httpStatus int, status, message string, retryAfter time.Duration) []byte {
	if status == "" {
		status = StatusFor(httpStatus)
	}
	dst = append(dst, `{"error":{"code":`...)
	dst = appendInt(dst, httpStatus)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, message)
	dst = append(dst, `,"status":`...)
	dst = appendString(dst, status)
	if retryAfter > 0 {
		secs := int((retryAfter + time.Second - 1) / time.Second)
		dst = append(dst, `,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"`...)
		dst = appendInt(dst, secs)
		dst = append(dst, `s"}]`...)
	}
	return append(dst, `}}`...)
}
