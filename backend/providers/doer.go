package providers

import (
	"compress/gzip"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Doer sends one upstream request; *http.Client is one.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Direct is Client without the per-request work Client does for redirects it
// will never follow. Client must have no cookie jar, no overall timeout, a
// non-nil Transport and a CheckRedirect that returns http.ErrUseLastResponse
// (the executors' client): for such a client, Client.Do copies every
// request's headers and URL and builds a closure to restore them on a
// redirect, then hands the first response back as it came. Direct sends the
// request straight to Client.Transport and gives the same answers: the
// response as the transport returned it (a 3xx included), or the same
// *url.Error. Requests that need more of Client (a URL carrying user
// credentials, no header map) go through Client.Do.
//
// With NewDirect, it also asks for gzip itself and decompresses a gzip
// answer as the transport does for the Accept-Encoding it would otherwise add
// (the header it sets is one shared value, not a new map per request).
type Direct struct {
	Client *http.Client
	gzip   []string // {"gzip"}: ask for it (NewDirect)
}

// NewDirect returns a Direct over client that asks for gzip answers itself
// and decompresses them: for a client whose transport compresses
// (DisableCompression false), the same exchange at fewer allocations.
func NewDirect(client *http.Client) Direct {
	return Direct{Client: client, gzip: []string{"gzip"}}
}

// Do implements Doer.
func (d Direct) Do(req *http.Request) (*http.Response, error) {
	gz := d.gzip != nil && req.Header != nil && req.Method != http.MethodHead &&
		req.Header["Accept-Encoding"] == nil && req.Header["Range"] == nil
	if gz {
		req.Header["Accept-Encoding"] = d.gzip
	}
	resp, err := d.send(req)
	if err == nil && gz && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		resp.Body = &gunzipBody{body: resp.Body}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
	}
	return resp, err
}

func (d Direct) send(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.User != nil || req.Header == nil || req.RequestURI != "" {
		resp, err := d.Client.Do(req)
		if err == nil {
			if err = RefuseInterim(resp); err != nil {
				return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: err}
			}
		}
		return resp, err
	}
	resp, err := d.Client.Transport.RoundTrip(req)
	if err == nil && resp == nil {
		err = errors.New("http: RoundTripper implementation returned a nil *Response with a nil error")
	}
	if err == nil {
		err = RefuseInterim(resp)
	}
	if err != nil {
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: err}
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	return resp, nil
}

// InterimStatusError is an upstream answer whose final status is 1xx. net/http
// hands a 101 Switching Protocols back as the response, with the raw
// connection as its body, which the caller then owns: neither the request's
// context nor the transport's timeouts close it any more, so reading that
// body waits for as long as the upstream keeps the socket open. No upstream
// call of the gateway asks to switch protocols, so such an answer is a failed
// attempt and its connection is closed at once (RefuseInterim).
type InterimStatusError struct{ Status int }

func (e *InterimStatusError) Error() string {
	return "the upstream answered " + strconv.Itoa(e.Status) + " " + http.StatusText(e.Status) +
		" as its final status (an informational status never ends an exchange)"
}

// RefuseInterim closes the body of an answer whose status is below 200 and
// returns an *InterimStatusError for it; any other answer passes (nil).
func RefuseInterim(resp *http.Response) error {
	if resp == nil || resp.StatusCode >= 200 {
		return nil
	}
	if resp.Body != nil {
		_ = resp.Body.Close()
	}
	return &InterimStatusError{Status: resp.StatusCode}
}

// urlErrorOp is the Op http.Client puts in its *url.Error ("Post", "Get").
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// gunzipBody decompresses a gzip answer, starting at the first Read (as the
// transport's own reader does, so a stream's first byte is not waited for in
// Do).
type gunzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gunzipBody) Read(p []byte) (int, error) {
	if g.zr == nil && g.err == nil {
		g.zr, g.err = gzip.NewReader(g.body)
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.zr.Read(p)
}

func (g *gunzipBody) Close() error { return g.body.Close() }
