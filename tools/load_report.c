/*
 * load_report.c -- what `dal load` prints: the text summary of a run, the
 * lines of --compare with its medians and their interval, and the one JSON
 * object of --json (docs/load.md, "Output").
 */
#include "load.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ text */

void load_print_result(const load_ctx_t *ctx, const load_result_t *r)
{
    const load_workload_t *wl = ctx->wl;

    printf("%s through %s: %" PRIu64 " thread%s, %.2f s measured, table %s\n", wl->name,
           strcmp(r->mode, "dal") != 0
               ? (ctx->o->server_prepared ? "plain libmysqlclient (server-side prepared)"
                                          : "plain libmysqlclient")
           : ctx->o->prepared          ? "dal (prepared statements)"
                                       : "dal",
           ctx->o->threads,
           ctx->o->threads == 1 ? "" : "s", (double)r->elapsed_ns / 1e9, ctx->o->table);
    if (wl->txn)
        printf("  each          START TRANSACTION, %zu statements, COMMIT\n", wl->nsteps);
    printf("  %-13s %" PRIu64 " (%.1f/s)\n", wl->txn ? "transactions" : "statements",
           r->events, r->events_per_s);
    if (wl->txn)
        printf("  %-13s %" PRIu64 " (%.1f/s)\n", "statements", r->statements,
               r->events_per_s * (double)wl->nsteps);
    printf("  rows          %" PRIu64 " read, %" PRIu64 " affected\n", r->rows, r->affected);
    printf("  latency (us)  avg %.1f  p50 %.1f  p95 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
           r->avg_ns / 1e3, (double)r->p50 / 1e3, (double)r->p95 / 1e3, (double)r->p99 / 1e3,
           (double)r->p999 / 1e3, (double)r->max / 1e3);
    printf("  client CPU    %.2f us per %s\n", r->cpu_ns_per_event / 1e3,
           wl->txn ? "transaction" : "statement");
    printf("  errors        %" PRIu64 "\n", r->errors);
}

int load_report_failure(const load_result_t *r)
{
    if (r->error[0] == '\0')
        return CLI_OK;
    cli_errorf("the %s run failed: %s", r->mode, r->error);
    return CLI_FAIL;
}

/* --------------------------------------------------------------- compare */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double ratio_of(const load_result_t *pair)
{
    return pair[1].events_per_s > 0 ? pair[0].events_per_s / pair[1].events_per_s : NAN;
}

/* Direct's median latency over dal's: like the throughput ratio, below 1
 * when dal is slower, but hardly moved by the stalls of a busy machine. */
static double p50_ratio_of(const load_result_t *pair)
{
    return pair[0].p50 > 0 ? (double)pair[1].p50 / (double)pair[0].p50 : NAN;
}

static double dal_cpu_us(const load_result_t *pair)
{
    return pair[0].cpu_ns_per_event / 1e3;
}

static double direct_cpu_us(const load_result_t *pair)
{
    return pair[1].cpu_ns_per_event / 1e3;
}

/*
 * For n sorted values, the interval [v[k-1], v[n-k]] holds the true median
 * with probability 1 - 2 P(B < k), B ~ Binomial(n, 1/2), whatever the
 * distribution (the sign test's interval).  Takes the narrowest with at
 * least 95 %; with too few values for that (n <= 5), the whole range and
 * what it has.
 */
static void median_interval(const double *v, size_t n, load_summary_t *out)
{
    double term = 1, below;   /* C(n, k-1) / 2^n, P(B < k) */
    size_t i, k = 1;

    for (i = 0; i < n; i++)
        term /= 2;
    below = term;
    while (k < n / 2) {
        double next = term * (double)(n - k + 1) / (double)k;
        if (1 - 2 * (below + next) < 0.95)
            break;
        term = next;
        below += next;
        k++;
    }
    out->low = v[k - 1];
    out->high = v[n - k];
    out->confidence = 1 - 2 * below;
}

static load_summary_t summarize(const load_result_t *results, size_t npairs,
                                double (*get)(const load_result_t *pair))
{
    load_summary_t s = { NAN, NAN, NAN, NAN };
    double *v = malloc(npairs * sizeof *v);
    size_t i;

    if (v == NULL || npairs == 0) {
        free(v);
        return s;
    }
    for (i = 0; i < npairs; i++)
        v[i] = get(results + 2 * i);
    qsort(v, npairs, sizeof *v, cmp_double);
    s.median = npairs % 2 ? v[npairs / 2] : (v[npairs / 2 - 1] + v[npairs / 2]) / 2;
    median_interval(v, npairs, &s);
    free(v);
    return s;
}

static double median_of(const load_result_t *results, size_t npairs,
                        double (*get)(const load_result_t *pair))
{
    return summarize(results, npairs, get).median;
}

void load_print_pair(uint64_t round, const load_result_t *pair)
{
    int i;

    printf("round %-3" PRIu64, round);
    for (i = 0; i < 2; i++)
        printf("  %-6s %9.1f/s p50 %7.1f p99 %7.1f cpu %6.2f us", pair[i].mode,
               pair[i].events_per_s, (double)pair[i].p50 / 1e3, (double)pair[i].p99 / 1e3,
               pair[i].cpu_ns_per_event / 1e3);
    printf("  ratio %.3f\n", ratio_of(pair));
    fflush(stdout);
}

void load_print_compare_head(const load_ctx_t *ctx)
{
    const load_opts_t *o = ctx->o;

    if (!o->json)
        printf("%s: dal against plain libmysqlclient, %" PRIu64 " thread%s, %" PRIu64
               " rounds, ratio = dal / direct throughput\n", ctx->wl->name, o->threads,
               o->threads == 1 ? "" : "s", o->rounds);
}

void load_compare_summary(const load_ctx_t *ctx, load_report_t *rep)
{
    rep->ratio = summarize(rep->results, rep->nresults / 2, ratio_of);
    if (!ctx->o->json && rep->nresults > 0)
        printf("median ratio %.3f (%.0f%% interval %.3f-%.3f) over %zu rounds; median p50 ratio "
               "%.3f; client CPU per %s: dal %.2f us, direct %.2f us (medians)\n",
               rep->ratio.median, rep->ratio.confidence * 100, rep->ratio.low, rep->ratio.high,
               rep->nresults / 2,
               median_of(rep->results, rep->nresults / 2, p50_ratio_of),
               ctx->wl->txn ? "transaction" : "statement",
               median_of(rep->results, rep->nresults / 2, dal_cpu_us),
               median_of(rep->results, rep->nresults / 2, direct_cpu_us));
}

/* ------------------------------------------------------------------ JSON */

/*
 * json.h has no writer for numbers with a fraction.  A value that follows
 * a key needs no separator, so it is written here and the writer told
 * that the key has its value (json_t's after_key).  Non-finite numbers
 * have no JSON form: null.
 */
static void json_key_double(json_t *j, const char *key, double v, int decimals)
{
    json_key(j, key);
    if (isfinite(v))
        fprintf(j->out, "%.*f", decimals, v);
    else
        fputs("null", j->out);
    j->after_key = 0;
}

static void json_key_uint(json_t *j, const char *key, uint64_t v)
{
    json_key(j, key);
    json_uint(j, v);
}

/* The fields of one run, inside an open object. */
static void json_result(json_t *j, const load_result_t *r)
{
    json_key(j, "mode");
    json_string(j, r->mode);
    json_key_uint(j, "events", r->events);
    json_key_uint(j, "statements", r->statements);
    json_key_uint(j, "errors", r->errors);
    json_key_uint(j, "rows", r->rows);
    json_key_uint(j, "affected_rows", r->affected);
    json_key_double(j, "seconds", (double)r->elapsed_ns / 1e9, 3);
    json_key_double(j, "events_per_sec", r->events_per_s, 1);
    json_key_double(j, "statements_per_sec",
                    r->events_per_s * (double)(r->events ? r->statements / r->events : 0), 1);
    json_key_double(j, "client_cpu_us_per_event", r->cpu_ns_per_event / 1e3, 2);
    json_key(j, "latency_us");
    json_object_begin(j);
    json_key_double(j, "avg", r->avg_ns / 1e3, 1);
    json_key_double(j, "p50", (double)r->p50 / 1e3, 1);
    json_key_double(j, "p95", (double)r->p95 / 1e3, 1);
    json_key_double(j, "p99", (double)r->p99 / 1e3, 1);
    json_key_double(j, "p999", (double)r->p999 / 1e3, 1);
    json_key_double(j, "max", (double)r->max / 1e3, 1);
    json_object_end(j);
    json_key(j, "error");
    json_string(j, r->error[0] ? r->error : NULL);
}

/* What the run was, in front of its figures. */
static void json_setup(json_t *j, const load_ctx_t *ctx)
{
    const load_opts_t *o = ctx->o;

    json_key(j, "workload");
    json_string(j, ctx->wl->name);
    json_key_uint(j, "threads", o->threads);
    json_key(j, "transactions");
    json_bool(j, ctx->wl->txn);
    json_key(j, "table");
    json_string(j, o->table);
    json_key_uint(j, "warmup_ms", o->warmup_ms);
    json_key(j, "prepared");
    json_bool(j, o->prepared);
    json_key(j, "direct_server_prepared");
    json_bool(j, o->server_prepared);
    json_key_uint(j, "direct_touch_lines", o->touch_lines);
    json_key_uint(j, "direct_busy_ns", o->busy_ns);
}

static void json_compare(json_t *j, const load_report_t *rep)
{
    size_t i;

    json_key(j, "rounds");
    json_array_begin(j);
    for (i = 0; i + 1 < rep->nresults; i += 2) {
        json_object_begin(j);
        json_key(j, "dal");
        json_object_begin(j);
        json_result(j, &rep->results[i]);
        json_object_end(j);
        json_key(j, "direct");
        json_object_begin(j);
        json_result(j, &rep->results[i + 1]);
        json_object_end(j);
        json_key_double(j, "ratio", ratio_of(&rep->results[i]), 4);
        json_object_end(j);
    }
    json_array_end(j);
    json_key_double(j, "median_ratio", rep->ratio.median, 4);
    json_key_double(j, "median_ratio_low", rep->ratio.low, 4);
    json_key_double(j, "median_ratio_high", rep->ratio.high, 4);
    json_key_double(j, "median_ratio_confidence", rep->ratio.confidence, 4);
    json_key_double(j, "median_p50_ratio", median_of(rep->results, rep->nresults / 2,
                                                     p50_ratio_of), 4);
    json_key_double(j, "median_client_cpu_us_dal", median_of(rep->results, rep->nresults / 2,
                                                             dal_cpu_us), 2);
    json_key_double(j, "median_client_cpu_us_direct",
                    median_of(rep->results, rep->nresults / 2, direct_cpu_us), 2);
}

/* One object for the whole command: the run's fields (or the rounds of
 * --compare), and what --prepare and --cleanup did. */
void load_json_report(const load_ctx_t *ctx, const load_report_t *rep)
{
    json_t j;

    json_init(&j, stdout);
    json_object_begin(&j);
    if (ctx->wl != NULL) {
        json_setup(&j, ctx);
        if (ctx->o->compare)
            json_compare(&j, rep);
        else if (rep->nresults == 1)
            json_result(&j, rep->results);
    }
    if (rep->prepared) {
        json_key_uint(&j, "prepared_rows", ctx->o->rows);
        json_key_double(&j, "prepare_seconds", rep->prepare_s, 3);
    }
    json_key(&j, "cleaned_up");
    json_bool(&j, rep->cleaned);
    json_object_end(&j);
}
