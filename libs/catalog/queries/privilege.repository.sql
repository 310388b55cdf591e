-- privilege.repository: SQL run by each method (generated; see query-snapshots.ts)

-- reachable

WITH RECURSIVE reach(oid) AS (
  SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = ANY($1::text[])
  UNION
  SELECT am.roleid FROM pg_catalog.pg_auth_members am JOIN reach ON am.member = reach.oid
)
SELECT r.rolname AS name, r.rolsuper AS superuser, r.rolcreaterole AS createrole,
       r.rolbypassrls AS bypassrls, r.rolreplication AS replication,
       ARRAY(SELECT DISTINCT g.rolname::text FROM pg_catalog.pg_auth_members am
         JOIN pg_catalog.pg_roles g ON g.oid = am.roleid WHERE am.member = r.oid ORDER BY 1) AS member_of
FROM reach JOIN pg_catalog.pg_roles r ON r.oid = reach.oid
ORDER BY r.rolname;
