-- inventory.repository: SQL run by each method (generated; see query-snapshots.ts)

-- inventory

WITH scope AS (SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[])) AS s(schema, kind))
SELECT o.oid, o.kind, o.schema, o.name, pg_catalog.pg_get_userbyid(o.owner_oid) AS owner
FROM (
  SELECT c.oid::int8::float8 AS oid,
         CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view'
                        WHEN 'm' THEN 'materialized_view' ELSE 'sequence' END AS kind,
         n.nspname::text AS schema, c.relname::text AS name, c.relowner AS owner_oid
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S') AND n.nspname IN (SELECT schema FROM scope)
  UNION ALL
  SELECT p.oid::int8::float8, 'function', n.nspname::text,
         p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')', p.proowner
  FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname IN (SELECT schema FROM scope WHERE kind = 'function')
  UNION ALL
  SELECT t.oid::int8::float8, 'type', n.nspname::text, t.typname::text, t.typowner
  FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
  WHERE n.nspname IN (SELECT schema FROM scope WHERE kind = 'type')
    AND t.typtype <> 'p'
    AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
    AND (t.typrelid = 0 OR EXISTS (
      SELECT 1 FROM pg_catalog.pg_class tc WHERE tc.oid = t.typrelid AND tc.relkind = 'c'))
) o
JOIN scope s ON s.schema = o.schema AND s.kind = o.kind
ORDER BY o.kind, o.schema, o.name;

-- grantability

SELECT q.oid::int8::float8 AS oid, q.privilege,
  CASE q.kind
    WHEN 'function' THEN
      pg_catalog.pg_has_role(current_user, (SELECT proowner FROM pg_catalog.pg_proc WHERE oid = q.oid), 'USAGE')
      OR pg_catalog.has_function_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
    WHEN 'type' THEN
      pg_catalog.pg_has_role(current_user, (SELECT typowner FROM pg_catalog.pg_type WHERE oid = q.oid), 'USAGE')
      OR pg_catalog.has_type_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
    WHEN 'sequence' THEN
      pg_catalog.pg_has_role(current_user, (SELECT relowner FROM pg_catalog.pg_class WHERE oid = q.oid), 'USAGE')
      OR pg_catalog.has_sequence_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
    ELSE
      pg_catalog.pg_has_role(current_user, (SELECT relowner FROM pg_catalog.pg_class WHERE oid = q.oid), 'USAGE')
      OR pg_catalog.has_table_privilege(current_user, q.oid, q.privilege || ' WITH GRANT OPTION')
  END AS grantable
FROM ROWS FROM (pg_catalog.unnest($1::float8[]::int8[]::oid[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[]))
  AS q(oid, kind, privilege);

-- functionSignatures

SELECT s.schema, s.declared,
  (SELECT p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')'
   FROM pg_catalog.pg_proc p
   WHERE p.oid = CASE WHEN s.has_args THEN pg_catalog.to_regprocedure(s.lookup)::oid
                      ELSE pg_catalog.to_regproc(s.lookup)::oid END) AS identity
FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[]), pg_catalog.unnest($4::bool[]))
  AS s(schema, declared, lookup, has_args);
