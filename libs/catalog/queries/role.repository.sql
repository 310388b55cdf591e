-- role.repository: SQL run by each method (generated; see query-snapshots.ts)

-- findRoles
select "r"."rolname" as "name", "r"."rolsuper" as "superuser", "r"."rolinherit" as "inherit", "r"."rolcreaterole" as "createrole", "r"."rolcreatedb" as "createdb", "r"."rolcanlogin" as "login", "r"."rolreplication" as "replication", "r"."rolbypassrls" as "bypassrls", "r"."rolconnlimit" as "connection_limit", "r"."rolconfig" as "config", pg_catalog.to_char(r.rolvaliduntil AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "valid_until", "d"."description" as "comment" from "pg_catalog"."pg_roles" as "r" left join "pg_catalog"."pg_shdescription" as "d" on "d"."objoid" = "r"."oid" and "d"."classoid" = 'pg_catalog.pg_authid'::pg_catalog.regclass where "r"."rolname" = ANY($1::text[]) order by "r"."rolname";

-- existingRoles
select "r"."rolname" as "name" from "pg_catalog"."pg_roles" as "r" where "r"."rolname" = ANY($1::text[]) order by "r"."rolname";

-- executor
select "r"."rolname" as "role", "r"."rolsuper" as "superuser", "r"."rolcreaterole" as "createrole", ARRAY(
SELECT g.rolname::text FROM pg_catalog.pg_roles g
WHERE NOT r.rolsuper AND g.oid <> r.oid AND pg_catalog.pg_has_role(r.oid, g.oid, 'MEMBER')
ORDER BY g.rolname) as "member_of" from "pg_catalog"."pg_roles" as "r" where "r"."rolname" = current_user;
