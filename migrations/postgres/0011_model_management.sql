-- 0011 (PostgreSQL): models you can manage, mirroring ../0011_model_management.sql.

ALTER TABLE provider_connections ADD COLUMN hidden_models TEXT NOT NULL DEFAULT '[]';
ALTER TABLE provider_connections ADD COLUMN model_aliases TEXT NOT NULL DEFAULT '{}';
