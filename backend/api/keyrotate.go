package api

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"omniroute/backend/errs"
	"omniroute/backend/httpx"
	"omniroute/backend/secrets"
)

// maxRotationGrace bounds how long a rotated key's previous secret may keep
// working (7 days).
const maxRotationGrace = 7 * 24 * time.Hour

// rotateKey gives a client key a new secret (POST /api/keys/{id}/rotate,
// body {graceMs?}): the same row, so its name, access, budget, limits, owner
// and usage history stay; the new secret is in the answer once. The previous
// secret keeps working for graceMs (default 0: it stops at once); a secret an
// earlier rotation left in its grace period stops now.
func (a *API) rotateKey(w http.ResponseWriter, r *http.Request) {
	var in struct {
		GraceMs *int64 `json:"graceMs"`
	}
	if r.ContentLength != 0 {
		if err := a.decode(r, &in); err != nil {
			httpx.WriteError(w, err)
			return
		}
	}
	var grace int64
	if in.GraceMs != nil {
		grace = *in.GraceMs
		if grace < 0 || grace > maxRotationGrace.Milliseconds() {
			httpx.WriteError(w, errs.New(errs.Invalid, "INVALID_GRACE",
				"graceMs must be 0 to %d (7 days)", maxRotationGrace.Milliseconds()).WithParam("graceMs"))
			return
		}
	}
	row, err := a.Store.APIKey(mux.Vars(r)["id"])
	if err != nil {
		httpx.WriteError(w, notFound(err, "key"))
		return
	}
	value := KeyPrefix + secrets.RandomToken(24)
	enc, err := a.Box.Seal(value)
	if err != nil {
		httpx.WriteError(w, err)
		return
	}
	now := a.Clock.Now().UnixMilli()
	row.PrevKeyHash, row.PrevValidUntil = row.KeyHash, now+grace
	if grace == 0 {
		row.PrevValidUntil = now
	}
	row.KeyHash, row.KeyEnc, row.KeyPrefix, row.RotatedAt = secrets.Hash(value), enc, value[:len(KeyPrefix)+4], now
	if err := a.Store.RotateAPIKey(&row); err != nil {
		httpx.WriteError(w, notFound(err, "key"))
		return
	}
	if err := a.reloadKeys(); err != nil {
		httpx.WriteError(w, err)
		return
	}
	out := a.keyView(row)
	out["key"] = value
	httpx.WriteJSON(w, http.StatusOK, out)
}
