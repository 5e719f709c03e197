#!/usr/bin/env bash
# run.sh [SECONDS] -- build the libFuzzer targets with clang (ASan + UBSan)
# and run each for SECONDS (default 60) on its seed corpus.  Any crash,
# sanitizer report or leak fails the run.  Used by tests/run.sh in CI.
set -euo pipefail

secs=${1:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
out=${DAL_FUZZ_BUILD:-$src/_build/fuzz}
mkdir -p "$out"
command -v clang >/dev/null || { echo "fuzz: clang not installed (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

# the proxy's targets build without the core's headers, as dal-proxy does
base=(-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
      -fno-sanitize-recover=undefined -I"$src/include")
flags=("${base[@]}")
for d in base sql config; do flags+=(-I"$src/core/$d"); done
clang "${flags[@]}" -o "$out/fuzz_sql" "$src/fuzz/fuzz_sql.c" "$src/core/sql/sql_lex.c" \
    "$src/core/sql/sql"{,_query,_stmt,_hint,_analyse}.c "$src/core/base/thread.c" "$src/core/base/clock.c"
clang "${flags[@]}" $(pkg-config --cflags inih) -o "$out/fuzz_config" "$src/fuzz/fuzz_config.c" \
    "$src/core/config/config.c" "$src/core/config/config_keys.c" "$src/core/base/parse.c" "$src/core/base/url.c" \
    "$src/core/base/error.c" $(pkg-config --libs inih)

codec=("$src/proxy/protocol/protocol.c"
       "$src/proxy/protocol/proto_"{handshake,auth,result,binary,command,split,text}.c)
clang "${base[@]}" -I"$src/proxy/protocol" -o "$out/fuzz_proto" "$src/fuzz/fuzz_proto.c" \
    "${codec[@]}" $(pkg-config --cflags --libs libcrypto)

clang "${base[@]}" -I"$src/proxy" -I"$src/proxy/protocol" -o "$out/fuzz_session" \
    "$src/fuzz/fuzz_session.c" "$src/proxy/redact.c" "${codec[@]}" \
    $(pkg-config --cflags --libs libcrypto)

clang "${base[@]}" -I"$src/proxy" -I"$src/proxy/protocol" -o "$out/fuzz_schema" \
    "$src/fuzz/fuzz_schema.c" "$src/proxy/schema_text.c" "$src/proxy/infoschema_scan.c" \
    "$src/proxy/protocol/protocol.c"

# the proxy's recognisers stand alone (recognise.h); the lexer reads back
# what their quoting helper writes
clang "${base[@]}" -I"$src/proxy" -I"$src/core/sql" -o "$out/fuzz_recognise" \
    "$src/fuzz/fuzz_recognise.c" "$src/proxy/recognise"{,_set}.c "$src/proxy/text.c" \
    "$src/core/sql/sql_lex.c"

# the relay's readers of a server's packets stand alone (relay_parse.h)
clang "${base[@]}" -I"$src/core/exec" -o "$out/fuzz_relay" "$src/fuzz/fuzz_relay.c" \
    "$src/core/exec/relay_parse.c"

clang "${flags[@]}" -I"$src/plugins" -o "$out/fuzz_etcd" "$src/fuzz/fuzz_etcd.c" \
    "$src/plugins/etcd_json.c" $(pkg-config --cflags --libs json-c)

# One target: its corpus, then secs of fuzzing; its log kept for a failure.
fuzz_one() {
    local t=$1 corpus="$out/corpus_$1"
    mkdir -p "$corpus"
    cp -n "$src/fuzz/corpus_$t"/* "$corpus"/ 2>/dev/null || true
    if "$out/fuzz_$t" -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 \
        "$corpus" 2>"$out/fuzz_$t.log"; then
        echo "fuzz_$t: ${secs}s, $(grep -E '^stat::number_of_executed_units' "$out/fuzz_$t.log" | tr -dc 0-9) runs"
    else
        tail -60 "$out/fuzz_$t.log" >&2
        echo "FAIL: fuzz_$t" >&2
        return 1
    fi
}

# The targets run side by side, as many at a time as there are cores.
par=${DAL_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
failed=0
pids=()
for t in sql config proto session schema etcd relay recognise; do
    fuzz_one "$t" &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$par" ]; then
        wait "${pids[0]}" || failed=1
        pids=("${pids[@]:1}")
    fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || exit 1
echo "fuzzing: no crash, no sanitizer report"
