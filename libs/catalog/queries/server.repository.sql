-- server.repository: SQL run by each method (generated; see query-snapshots.ts)

-- server

SELECT pg_catalog.current_setting('server_version_num')::int AS server_version_num,
       pg_catalog.current_database()::text AS current_database;

-- systemIdentifier

SELECT CASE WHEN system_identifier < 0
            THEN (system_identifier::numeric + 18446744073709551616)::text
            ELSE system_identifier::text END AS physical
FROM pg_catalog.pg_control_system();
