-- 0002: model discovery. A connection keeps what its upstream's GET /models
-- answered (or the catalogue's default list when that failed) apart from the
-- models the user listed by hand, so a refresh never erases the user's list.

ALTER TABLE provider_connections ADD COLUMN discovered_models TEXT NOT NULL DEFAULT '[]';
-- '' (never asked), 'upstream' (GET /models answered) or 'catalog' (it failed:
-- the catalogue's default list stands in).
ALTER TABLE provider_connections ADD COLUMN models_source TEXT NOT NULL DEFAULT '';
ALTER TABLE provider_connections ADD COLUMN models_refreshed_at INTEGER NOT NULL DEFAULT 0;
-- Why the last discovery failed ('' when it worked); never contains a secret.
ALTER TABLE provider_connections ADD COLUMN models_error TEXT NOT NULL DEFAULT '';
