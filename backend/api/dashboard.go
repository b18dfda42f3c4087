package api

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
)

// dashboardCSP is the dashboard's Content-Security-Policy: its own scripts,
// styles and API only, and never inside another page's frame.
const dashboardCSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"

// dashboardRoutes serves the SPA at /dashboard/ with an index fallback for
// client-side routes, and redirects / to it.
func (a *API) dashboardRoutes(r *mux.Router) {
	r.Handle("/", http.RedirectHandler("/dashboard/", http.StatusFound)).Methods(http.MethodGet, http.MethodHead)
	r.Handle("/dashboard", http.RedirectHandler("/dashboard/", http.StatusMovedPermanently)).Methods(http.MethodGet, http.MethodHead)
	files := http.FileServer(http.FS(a.Dashboard))
	r.PathPrefix("/dashboard/").Methods(http.MethodGet, http.MethodHead).Handler(http.StripPrefix("/dashboard", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No page may frame the dashboard (clickjacking), whatever the answer;
		// the desktop window loads it as its top-level document, never in a frame.
		w.Header().Set("Content-Security-Policy", dashboardCSP)
		w.Header().Set("X-Frame-Options", "DENY")
		p := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if p == "" || p == "." {
			p = "index.html"
		}
		if _, err := fs.Stat(a.Dashboard, p); err != nil {
			if strings.HasPrefix(p, "assets/") {
				httpx.WriteError(w, errs.New(errs.NotFound, "ASSET_NOT_FOUND", "no such asset"))
				return
			}
			if _, err := fs.Stat(a.Dashboard, "index.html"); err != nil {
				httpx.WriteError(w, errs.New(errs.NotFound, "DASHBOARD_NOT_BUILT", "the dashboard was not built into this binary; run `make build`"))
				return
			}
			r.URL.Path = "/"
		}
		if strings.HasPrefix(p, "assets/") {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})))
}
