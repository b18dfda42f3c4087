-- 0002 (PostgreSQL): model discovery, mirroring ../0002_discovered_models.sql.

ALTER TABLE provider_connections ADD COLUMN discovered_models TEXT NOT NULL DEFAULT '[]';
ALTER TABLE provider_connections ADD COLUMN models_source TEXT NOT NULL DEFAULT '';
ALTER TABLE provider_connections ADD COLUMN models_refreshed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE provider_connections ADD COLUMN models_error TEXT NOT NULL DEFAULT '';
