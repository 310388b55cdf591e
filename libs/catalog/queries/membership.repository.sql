-- membership.repository: SQL run by each method (generated; see query-snapshots.ts)

-- findMemberships (PostgreSQL 15)
select "g"."rolname" as "role", "m"."rolname" as "member", m.rolinherit as "inherit", "am"."admin_option" as "admin", "gr"."rolname" as "grantor", am.grantor = 10 as "grantor_is_bootstrap" from "pg_catalog"."pg_auth_members" as "am" inner join "pg_catalog"."pg_roles" as "g" on "g"."oid" = "am"."roleid" inner join "pg_catalog"."pg_roles" as "m" on "m"."oid" = "am"."member" left join "pg_catalog"."pg_roles" as "gr" on "gr"."oid" = "am"."grantor" where "g"."rolname" = ANY($1::text[]) order by "g"."rolname", "m"."rolname", "gr"."rolname";

-- findMemberships (PostgreSQL 16+)
select "g"."rolname" as "role", "m"."rolname" as "member", am.inherit_option as "inherit", "am"."admin_option" as "admin", "gr"."rolname" as "grantor", am.grantor = 10 as "grantor_is_bootstrap" from "pg_catalog"."pg_auth_members" as "am" inner join "pg_catalog"."pg_roles" as "g" on "g"."oid" = "am"."roleid" inner join "pg_catalog"."pg_roles" as "m" on "m"."oid" = "am"."member" left join "pg_catalog"."pg_roles" as "gr" on "gr"."oid" = "am"."grantor" where "g"."rolname" = ANY($1::text[]) order by "g"."rolname", "m"."rolname", "gr"."rolname";
