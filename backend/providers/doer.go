package providers

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/url"
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
type Direct struct {
	Client *http.Client
}

// Do implements Doer.
func (d Direct) Do(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.User != nil || req.Header == nil || req.RequestURI != "" {
		return d.Client.Do(req)
	}
	resp, err := d.Client.Transport.RoundTrip(req)
	if err == nil && resp == nil {
		err = errors.New("http: RoundTripper implementation returned a nil *Response with a nil error")
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

// urlErrorOp is the Op http.Client puts in its *url.Error ("Post", "Get").
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}
