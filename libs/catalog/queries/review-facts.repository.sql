-- review-facts.repository: SQL run by each method (generated; see query-snapshots.ts)

-- executorEdges (PostgreSQL 15)

WITH RECURSIVE up(oid) AS (
  SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user
  UNION
  SELECT a.roleid FROM pg_catalog.pg_auth_members a JOIN up ON a.member = up.oid
)
SELECT g.rolname AS role, m.rolname AS member, m.rolinherit AS inherit, am.admin_option AS admin,
       CASE WHEN am.grantor = 10 THEN NULL ELSE gr.rolname END AS grantor
FROM up
JOIN pg_catalog.pg_auth_members am ON am.member = up.oid
JOIN pg_catalog.pg_roles g ON g.oid = am.roleid
JOIN pg_catalog.pg_roles m ON m.oid = am.member
LEFT JOIN pg_catalog.pg_roles gr ON gr.oid = am.grantor
ORDER BY g.rolname, m.rolname, gr.rolname;

-- executorEdges (PostgreSQL 16+)

WITH RECURSIVE up(oid) AS (
  SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user
  UNION
  SELECT a.roleid FROM pg_catalog.pg_auth_members a JOIN up ON a.member = up.oid
)
SELECT g.rolname AS role, m.rolname AS member, am.inherit_option AS inherit, am.admin_option AS admin,
       CASE WHEN am.grantor = 10 THEN NULL ELSE gr.rolname END AS grantor
FROM up
JOIN pg_catalog.pg_auth_members am ON am.member = up.oid
JOIN pg_catalog.pg_roles g ON g.oid = am.roleid
JOIN pg_catalog.pg_roles m ON m.oid = am.member
LEFT JOIN pg_catalog.pg_roles gr ON gr.oid = am.grantor
ORDER BY g.rolname, m.rolname, gr.rolname;

-- dropRoleFacts

WITH db AS (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database()),
deps AS (
  SELECT d.refobjid AS roleid, d.deptype, d.dbid, d.classid, d.objid, d.objsubid
  FROM pg_catalog.pg_shdepend d
  WHERE d.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass AND d.deptype IN ('o', 'a', 'r', 'i')
)
SELECT r.rolname AS role,
  (SELECT pg_catalog.count(*) FROM deps, db WHERE deps.roleid = r.oid AND deptype = 'o' AND dbid = db.oid)::int AS owned_current,
  (SELECT pg_catalog.count(*) FROM deps WHERE deps.roleid = r.oid AND deptype = 'o' AND dbid = 0)::int AS owned_shared,
  (SELECT pg_catalog.count(*) FROM deps, db WHERE deps.roleid = r.oid AND deptype = 'o' AND dbid NOT IN (0, db.oid))::int AS owned_other,
  (SELECT pg_catalog.count(*) FROM deps, db WHERE deps.roleid = r.oid AND deptype <> 'o' AND dbid IN (0, db.oid))::int AS acl_current,
  (SELECT pg_catalog.count(*) FROM deps, db WHERE deps.roleid = r.oid AND deptype <> 'o' AND dbid NOT IN (0, db.oid))::int AS acl_other,
  (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity a
    WHERE a.usesysid = r.oid AND a.pid <> pg_catalog.pg_backend_pid())::int AS sessions,
  ARRAY(SELECT x.description FROM (
      SELECT DISTINCT pg_catalog.pg_describe_object(deps.classid, deps.objid, deps.objsubid) AS description
      FROM deps, db WHERE deps.roleid = r.oid AND dbid IN (0, db.oid)) x
    WHERE x.description IS NOT NULL ORDER BY x.description LIMIT 5) AS examples,
  ARRAY(SELECT DISTINCT g.rolname::text FROM pg_catalog.pg_auth_members am
    JOIN pg_catalog.pg_roles g ON g.oid = am.roleid WHERE am.member = r.oid ORDER BY 1) AS member_of,
  ARRAY(SELECT DISTINCT m.rolname::text FROM pg_catalog.pg_auth_members am
    JOIN pg_catalog.pg_roles m ON m.oid = am.member WHERE am.roleid = r.oid ORDER BY 1) AS members
FROM pg_catalog.pg_roles r
WHERE r.rolname = ANY($1::text[])
ORDER BY r.rolname;
