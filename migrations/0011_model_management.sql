-- 0011: models you can manage (issue 35). A connection keeps the models the
-- user hid (a JSON array: never listed in /v1/models, never routed to on this
-- connection) and its per-model aliases (a JSON object alias → model: the
-- alias is listed and routes to that model on this connection).

ALTER TABLE provider_connections ADD COLUMN hidden_models TEXT NOT NULL DEFAULT '[]';
ALTER TABLE provider_connections ADD COLUMN model_aliases TEXT NOT NULL DEFAULT '{}';
