-- fingerprint.repository: SQL run by each method (generated; see query-snapshots.ts)

-- parts
SELECT (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(r.*, d.description))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_roles r
    LEFT JOIN pg_catalog.pg_shdescription d
      ON d.objoid = r.oid AND d.classoid = 'pg_catalog.pg_authid'::pg_catalog.regclass
    WHERE r.rolname = ANY($1::text[])) AS roles,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(am.*, pg_catalog.pg_get_userbyid(am.roleid), pg_catalog.pg_get_userbyid(am.member),
      pg_catalog.pg_get_userbyid(am.grantor), m.rolinherit))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_auth_members am
    JOIN pg_catalog.pg_roles g ON g.oid = am.roleid
    JOIN pg_catalog.pg_roles m ON m.oid = am.member
    WHERE g.rolname = ANY($2::text[])) AS memberships,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((g.rolname)::text, 0)::numeric), 0)
    FROM pg_catalog.pg_roles g
    WHERE NOT (SELECT x.rolsuper FROM pg_catalog.pg_roles x WHERE x.rolname = current_user)
      AND pg_catalog.pg_has_role(current_user, g.oid, 'USAGE')) AS executor_usage,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(n.oid, n.nspname, pg_catalog.pg_get_userbyid(n.nspowner), n.nspacl))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_namespace n WHERE n.nspname = ANY($3::text[])) AS schemas,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(c.oid, n.nspname, c.relname, c.relkind,
      pg_catalog.pg_get_userbyid(c.relowner), c.relacl))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = "c"."relnamespace" AND n.nspname = ANY($4::text[])
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S')) AS relations,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(p.oid, n.nspname, p.proname,
      pg_catalog.pg_get_function_identity_arguments(p.oid), p.prokind,
      pg_catalog.pg_get_userbyid(p.proowner), p.proacl))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = "p"."pronamespace" AND n.nspname = ANY($5::text[])) AS functions,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(t.oid, n.nspname, t.typname,
      pg_catalog.pg_get_userbyid(t.typowner), t.typacl))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = "t"."typnamespace" AND n.nspname = ANY($6::text[]) WHERE t.typtype <> 'p'
AND NOT (t.typelem <> 0 AND EXISTS (
  SELECT 1 FROM pg_catalog.pg_type e WHERE e.oid = t.typelem AND e.typarray = t.oid))
AND (t.typrelid = 0 OR EXISTS (
  SELECT 1 FROM pg_catalog.pg_class tc WHERE tc.oid = t.typrelid AND tc.relkind = 'c'))) AS types,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(d.oid, d.datname, pg_catalog.pg_get_userbyid(d.datdba), d.datacl))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()) AS database_acl,
  (
    SELECT pg_catalog.count(*) || ':' || COALESCE(pg_catalog.sum(pg_catalog.hashtextextended((ROW(da.oid, pg_catalog.pg_get_userbyid(da.defaclrole), n.nspname,
      da.defaclobjtype, da.defaclacl))::text, 0)::numeric), 0)
    FROM pg_catalog.pg_default_acl da
    LEFT JOIN pg_catalog.pg_namespace n ON n.oid = da.defaclnamespace AND n.nspname = ANY($7::text[])
    WHERE n.oid IS NOT NULL
       OR (da.defaclnamespace = 0 AND pg_catalog.pg_get_userbyid(da.defaclrole) = ANY($8::text[]))) AS default_acls;

-- verifiers

SELECT pg_catalog.has_table_privilege('pg_catalog.pg_authid', 'SELECT') AS readable;
