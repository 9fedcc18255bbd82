-- HDB++ roles and users (cluster-global, idempotent), then their grants in database hdbpp
DO $$ BEGIN CREATE ROLE readonly NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE readwrite NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE hdb_cfg_man LOGIN IN ROLE readwrite; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE hdb_event_sub LOGIN IN ROLE readwrite; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE hdb_data_reporter LOGIN IN ROLE readonly; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
\c hdbpp
GRANT CONNECT ON DATABASE "hdbpp" TO "readonly", "readwrite";
GRANT USAGE ON SCHEMA public TO "readonly", "readwrite";
GRANT SELECT ON ALL TABLES IN SCHEMA public TO "readonly";
GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO "readwrite";
GRANT UPDATE (ttl) ON att_conf TO "readwrite";
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "readwrite";
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO "readonly";
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT ON TABLES TO "readwrite";
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO "readwrite";
