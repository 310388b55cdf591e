-- default-privilege.repository: SQL run by each method (generated; see query-snapshots.ts)

-- schemaLayer
select pg_catalog.pg_get_userbyid("d"."defaclrole") as "owner", n.nspname::text as "schema", d.defaclobjtype::text as "objtype", CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee) END as "grantee", "a"."privilege_type" as "privilege" from "pg_catalog"."pg_default_acl" as "d" inner join "pg_catalog"."pg_namespace" as "n" on "n"."oid" = "d"."defaclnamespace" cross join lateral pg_catalog.aclexplode(d.defaclacl) as "a" where "n"."nspname" = ANY($1::text[]) and a.grantee <> d.defaclrole;

-- globalLayer
select "s"."owner" as "owner", NULL::text as "schema", "s"."objtype" as "objtype", CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee) END as "grantee", "a"."privilege_type" as "privilege" from (
SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[]))
  AS u(owner, objtype, deflt)) as "s" inner join "pg_catalog"."pg_roles" as "o" on "o"."rolname" = "s"."owner" left join "pg_catalog"."pg_default_acl" as "d" on "d"."defaclrole" = "o"."oid" and "d"."defaclnamespace" = 0 and d.defaclobjtype = s.objtype::"char" cross join lateral pg_catalog.aclexplode(COALESCE(d.defaclacl, pg_catalog.acldefault(s.deflt::"char", o.oid))) as "a" where a.grantee <> o.oid;
