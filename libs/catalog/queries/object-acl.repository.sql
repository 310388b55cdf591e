-- object-acl.repository: SQL run by each method (generated; see query-snapshots.ts)

-- relationGrants
select c.relkind::text as "kind", "n"."nspname" as "schema", "c"."relname" as "name", pg_catalog.pg_get_userbyid("c"."relowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", "g"."rolname" as "grantee" from "pg_catalog"."pg_class" as "c" inner join "pg_catalog"."pg_namespace" as "n" on "n"."oid" = "c"."relnamespace" cross join lateral pg_catalog.aclexplode(c.relacl) as "a" inner join "pg_catalog"."pg_roles" as "g" on "g"."oid" = "a"."grantee" where c.relkind IN ('r', 'p', 'v', 'm', 'S') and "n"."nspname" = ANY($1::text[]) and "g"."rolname" = ANY($2::text[]) and (a.grantee <> c.relowner OR a.privilege_type = 'SELECT');

-- relationPublicRows
select c.relkind::text as "kind", "n"."nspname" as "schema", "c"."relname" as "name", pg_catalog.pg_get_userbyid("c"."relowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", 'PUBLIC' as "grantee" from "pg_catalog"."pg_class" as "c" inner join "pg_catalog"."pg_namespace" as "n" on "n"."oid" = "c"."relnamespace" cross join lateral pg_catalog.aclexplode(COALESCE(c.relacl, pg_catalog.acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner))) as "a" where c.relkind IN ('r', 'p', 'v', 'm', 'S') and "n"."nspname" = ANY($1::text[]) and "a"."grantee" = 0;

-- functionGrants
select 'function' as "kind", "n"."nspname" as "schema", p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')' as "name", pg_catalog.pg_get_userbyid("p"."proowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", "g"."rolname" as "grantee" from "pg_catalog"."pg_proc" as "p" inner join "pg_catalog"."pg_namespace" as "n" on "n"."oid" = "p"."pronamespace" cross join lateral pg_catalog.aclexplode(p.proacl) as "a" inner join "pg_catalog"."pg_roles" as "g" on "g"."oid" = "a"."grantee" where "n"."nspname" = ANY($1::text[]) and "g"."rolname" = ANY($2::text[]);

-- functionPublicRows
select 'function' as "kind", "n"."nspname" as "schema", p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')' as "name", pg_catalog.pg_get_userbyid("p"."proowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", 'PUBLIC' as "grantee" from "pg_catalog"."pg_proc" as "p" inner join "pg_catalog"."pg_namespace" as "n" on "n"."oid" = "p"."pronamespace" cross join lateral pg_catalog.aclexplode(COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))) as "a" where "n"."nspname" = ANY($1::text[]) and "a"."grantee" = 0;

-- typeGrants
select 'type' as "kind", "n"."nspname" as "schema", "t"."typname" as "name", pg_catalog.pg_get_userbyid("t"."typowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", "g"."rolname" as "grantee" from "pg_catalog"."pg_type" as "t" inner join "pg_catalog"."pg_namespace" as "n" on "n"."oid" = "t"."typnamespace" cross join lateral pg_catalog.aclexplode(t.typacl) as "a" inner join "pg_catalog"."pg_roles" as "g" on "g"."oid" = "a"."grantee" where "n"."nspname" = ANY($1::text[]) and t.typtype <> 'p'
AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
AND (t.typrelid = 0 OR EXISTS (
  SELECT 1 FROM pg_catalog.pg_class tc WHERE tc.oid = t.typrelid AND tc.relkind = 'c')) and "g"."rolname" = ANY($2::text[]);

-- typePublicRows
select 'type' as "kind", "n"."nspname" as "schema", "t"."typname" as "name", pg_catalog.pg_get_userbyid("t"."typowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", 'PUBLIC' as "grantee" from "pg_catalog"."pg_type" as "t" inner join "pg_catalog"."pg_namespace" as "n" on "n"."oid" = "t"."typnamespace" cross join lateral pg_catalog.aclexplode(COALESCE(t.typacl, pg_catalog.acldefault('T', t.typowner))) as "a" where "n"."nspname" = ANY($1::text[]) and t.typtype <> 'p'
AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
AND (t.typrelid = 0 OR EXISTS (
  SELECT 1 FROM pg_catalog.pg_class tc WHERE tc.oid = t.typrelid AND tc.relkind = 'c')) and "a"."grantee" = 0;

-- schemaGrants
select 'schema' as "kind", NULL::text as "schema", "n"."nspname" as "name", pg_catalog.pg_get_userbyid("n"."nspowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", "g"."rolname" as "grantee" from "pg_catalog"."pg_namespace" as "n" cross join lateral pg_catalog.aclexplode(n.nspacl) as "a" inner join "pg_catalog"."pg_roles" as "g" on "g"."oid" = "a"."grantee" where "n"."nspname" = ANY($1::text[]) and "g"."rolname" = ANY($2::text[]) and a.grantee <> n.nspowner;

-- schemaPublicRows
select 'schema' as "kind", NULL::text as "schema", "n"."nspname" as "name", pg_catalog.pg_get_userbyid("n"."nspowner") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", 'PUBLIC' as "grantee" from "pg_catalog"."pg_namespace" as "n" cross join lateral pg_catalog.aclexplode(COALESCE(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) as "a" where "n"."nspname" = ANY($1::text[]) and "a"."grantee" = 0;

-- databaseGrants
select 'database' as "kind", NULL::text as "schema", "d"."datname" as "name", pg_catalog.pg_get_userbyid("d"."datdba") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", "g"."rolname" as "grantee" from "pg_catalog"."pg_database" as "d" cross join lateral pg_catalog.aclexplode(d.datacl) as "a" inner join "pg_catalog"."pg_roles" as "g" on "g"."oid" = "a"."grantee" where "d"."datname" = pg_catalog.current_database() and "g"."rolname" = ANY($1::text[]) and a.grantee <> d.datdba;

-- databasePublicRows
select 'database' as "kind", NULL::text as "schema", "d"."datname" as "name", pg_catalog.pg_get_userbyid("d"."datdba") as "owner", pg_catalog.pg_get_userbyid("a"."grantor") as "grantor", "a"."privilege_type" as "privilege", 'PUBLIC' as "grantee" from "pg_catalog"."pg_database" as "d" cross join lateral pg_catalog.aclexplode(COALESCE(d.datacl, pg_catalog.acldefault('d', d.datdba))) as "a" where "d"."datname" = pg_catalog.current_database() and "a"."grantee" = 0;
