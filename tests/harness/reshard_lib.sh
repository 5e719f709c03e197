# reshard_lib.sh -- shared by the reshard suites (sourced after proxy_lib.sh).

# reshard_rows N: the INSERTs of N rows (id, poi, name) of food, 500 a statement
reshard_rows() {
    python3 - "$1" <<'PY'
import sys
n = int(sys.argv[1])
for s in range(1, n + 1, 500):
    print("INSERT INTO food VALUES %s;" % ", ".join(
        "(%d, %d, 'dish %d')" % (i, i * 7 % 100, i) for i in range(s, min(s + 500, n + 1))))
PY
}

# reshard_layout NAME TABLES: the INI of food on datasources NAME0 and NAME1
# (databases NAME_0, NAME_1 of the first two servers), TABLES tables, with
# the file followed and layout changes allowed
reshard_layout() {
    for i in 0 1; do
        printf '[datasource %s%d]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/%s_%d\n' "$1" "$i" "${ports[$i]}" "$1" "$i"
    done
    printf '[table food]\ndatasource = %s\ndb_shard_num = 2\ntable_shard_num = %d\nshard_key = poi\nstrategy = mod\n' "$1" "$2"
    printf '[dal]\nwatch = true\nallow_reshard = true\n'
}

# reshard_two_layouts ROWS: two servers; old.ini (2 x 2) and new.ini (2 x 4)
# as reshard_layout, ref.ini an unsharded reference; food created in the
# old layout and the reference, with ROWS rows in both; dal (on old.ini)
# and dump INI (food's rows as JSON) defined
reshard_two_layouts() {
    px_cluster 2 --db 'old_%d' --db 'new_%d' --db ref
    dal_bin=${DAL_BIN:-$builddir/tools/dal}
    reshard_layout old 2 >"$work/old.ini"
    reshard_layout new 4 >"$work/new.ini"
    printf '[datasource ref]\nmaster = mysql://dal:dalpass@127.0.0.1:%s/ref\n[dal]\ndefault_datasource = ref\n' \
        "${ports[1]}" >"$work/ref.ini"
    dal() { "$dal_bin" -c "$work/old.ini" "$@"; }
    dump() { "$dal_bin" -c "$1" exec --json "SELECT id, poi, name FROM food ORDER BY id"; }
    local ddl="CREATE TABLE food (id BIGINT PRIMARY KEY, poi BIGINT NOT NULL, name VARCHAR(60))"
    dal exec "$ddl" >/dev/null || fail "create"
    "$dal_bin" -c "$work/ref.ini" exec "$ddl" >/dev/null || fail "create the reference"
    reshard_rows "$1" >"$work/rows.sql"
    dal shell <"$work/rows.sql" >/dev/null || fail "loading rows"
    "$dal_bin" -c "$work/ref.ini" shell <"$work/rows.sql" >/dev/null || fail "loading the reference"
}

# reshard_writer NAME FIRST LAST NEXT_ID: inserts, updates and deletes on rows
# FIRST..LAST and its own from NEXT_ID on, through `dal shell` following
# live.ini; its statements go to $work/ops_NAME.sql when $work/stop appears
reshard_writer() {
    python3 - "$2" "$3" "$4" "$work/stop" "$work/ops_$1.sql" <<'PY' | "$dal_bin" -c "$work/live.ini" shell >/dev/null 2>"$work/writer_$1.err" &
import os, random, sys, time
first, last, next_id, stop, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rng = random.Random(next_id)
ids, stmts, i = list(range(first, last + 1)), [], 0
while not os.path.exists(stop):
    r = rng.random()
    if r < 0.4:
        sql = "INSERT INTO food (id, poi, name) VALUES (%d, %d, 'w%d')" % (next_id, rng.randrange(100), i)
        ids.append(next_id)
        next_id += 1
    elif r < 0.8:
        sql = "UPDATE food SET name = 'u%d' WHERE id = %d" % (i, rng.choice(ids))
    else:
        sql = "DELETE FROM food WHERE id = %d" % rng.choice(ids)
    stmts.append(sql)
    i += 1
    print(sql + ";", flush=True)
    time.sleep(0.004)
with open(path, "w") as f:
    f.write("".join(s + ";\n" for s in stmts))
PY
}
