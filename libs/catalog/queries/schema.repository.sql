-- schema.repository: SQL run by each method (generated; see query-snapshots.ts)

-- findSchemas
select "n"."nspname" as "name", pg_catalog.pg_get_userbyid("n"."nspowner") as "owner", ARRAY(
SELECT a.privilege_type
FROM pg_catalog.aclexplode(COALESCE(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
WHERE a.grantee = n.nspowner
ORDER BY a.privilege_type) as "owner_privileges" from "pg_catalog"."pg_namespace" as "n" where "n"."nspname" = ANY($1::text[]) order by "n"."nspname";
