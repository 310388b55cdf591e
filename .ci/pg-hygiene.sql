-- Run by .ci/run before the tests: psql -X -v min_age=<minutes> -f .ci/pg-hygiene.sql <admin URL, superuser>.
-- Tests and benches create and drop thousands of roles and databases a day; their dead rows in the shared
-- catalogs (pg_authid, pg_auth_members, pg_shdepend, pg_database, ...) slowed a whole CI run by minutes. This
-- drops what killed runs left behind (only names our sandboxes generate, only runs that are unmistakably
-- over) and VACUUMs the shared catalogs. Idempotent; takes seconds. Every statement runs on its own
-- (DROP DATABASE and VACUUM refuse a transaction block); a failed one is reported and the next one runs.
\set QUIET on
\pset footer off

-- 1. Databases of sandboxes (libs/testing: rp_test_<label>_<10 hex id>; the fleet benches:
--    rp_test_fleet_<id>_<k>, rp_test_fleettpl_<id>) whose run is over: no session on any database of the run
--    and none of them changed (its directory under base/) for :min_age minutes. A database of a live run is
--    kept, and so is every other database of that run (a bench's template sits idle between its stages).
--    Plain DROP DATABASE (no FORCE): a session that connects meanwhile makes it fail, and it is kept. A
--    database a drop left invalid (interrupted, datconnlimit -2: nobody can connect) is always dropped.
CREATE TEMPORARY VIEW sandbox_databases AS
SELECT datname,
       NOT invalid
         AND bool_or(NOT invalid AND (busy OR changed > now() - make_interval(mins => :min_age)))
               OVER (PARTITION BY run) AS live
  FROM (SELECT d.datname,
               substring(d.datname FROM '([0-9a-f]{10})(_[0-9]+)?$') AS run,
               d.datconnlimit = -2 AS invalid,
               EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity s WHERE s.datid = d.oid) AS busy,
               coalesce((pg_catalog.pg_stat_file('base/' || d.oid, true)).modification, now()) AS changed
          FROM pg_catalog.pg_database d
         WHERE d.datname ~ '^rp_test_[a-z0-9_]+_[0-9a-f]{10}(_[0-9]+)?$'
           AND NOT d.datistemplate) ours;
SELECT count(*) FILTER (WHERE NOT live) AS stale, count(*) FILTER (WHERE live) AS live
  FROM sandbox_databases
\gset
\echo sandbox databases: dropping :stale of killed runs, keeping :live of runs in progress or younger than :min_age min
SELECT format('DROP DATABASE %I', datname) FROM sandbox_databases WHERE NOT live ORDER BY datname
\gexec

-- 2. Roles named with a test run's id (rp_<id>_..., rp_<word>_<id>_..., e2e_<id>_...: the prefixes the specs,
--    e2e stacks and fleet benches generate), only when the server is quiet: no other client session and no
--    sandbox database left. Roles carry no creation time, so a run in progress is recognised by its
--    sessions and its database. A role that still owns or holds something elsewhere fails to drop and stays.
CREATE TEMPORARY VIEW run_roles AS
SELECT rolname FROM pg_catalog.pg_roles WHERE rolname ~ '^(rp_([a-z]+_)?|e2e_)[0-9a-f]{10}_';
SELECT (SELECT count(*) FROM run_roles) AS roles,
       NOT EXISTS (SELECT 1 FROM sandbox_databases)
         AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity
                          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()) AS quiet
\gset
\if :quiet
\echo test roles: dropping :roles (the server is quiet)
SELECT format('DROP ROLE %I', rolname) FROM run_roles ORDER BY rolname
\gexec
\else
\echo test roles: keeping :roles (sandbox databases or other sessions remain: a run may be in progress)
\endif

-- 3. The shared catalogs' dead rows before and after a VACUUM (ANALYZE) of all of them.
CREATE TEMPORARY VIEW shared_dead AS
SELECT coalesce(sum(n_dead_tup), 0) AS dead
  FROM pg_catalog.pg_stat_all_tables s JOIN pg_catalog.pg_class c ON c.oid = s.relid
 WHERE c.relisshared AND c.relkind = 'r';
SELECT dead AS dead_before FROM shared_dead
\gset
SELECT format('VACUUM (ANALYZE) %s', string_agg(oid::regclass::text, ', ' ORDER BY relname))
  FROM pg_catalog.pg_class
 WHERE relisshared AND relkind = 'r'
\gexec
SELECT dead AS dead_after FROM shared_dead
\gset
\echo shared catalogs: :dead_before dead rows before VACUUM, :dead_after after
