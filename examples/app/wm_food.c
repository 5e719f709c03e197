/*
 * wm_food.c -- a small application on libdal: adds a dish to a shop's menu
 * and prints the menu, with the shop id (wm_poi_id) as the shard value.
 *
 *   wm_food CONFIG POI_ID [NAME PRICE]
 *
 * Build: cc wm_food.c $(pkg-config --cflags --libs dal) -o wm_food
 */
#include <stdio.h>
#include <stdlib.h>

#include <dal/dal.h>

static void log_line(void *user, dal_log_level_t level, const char *component, const char *msg)
{
    (void)user;
    fprintf(stderr, "[%s] %s: %s\n", dal_log_level_name(level), component, msg);
}

static int add_dish(dal_t *dal, const dal_query_opts_t *opts, long long poi, const char *name,
                    const char *price)
{
    dal_value_t params[3] = {dal_int(poi), dal_str(name), dal_str(price)};
    dal_error_t err;
    uint64_t n;

    if (dal_exec(dal, opts, "INSERT INTO wm_food (wm_poi_id, name, price) VALUES (?, ?, ?)",
                 params, 3, &n, &err) != 0) {
        fprintf(stderr, "insert: %s\n", err.message);
        return -1;
    }
    printf("added %llu dish\n", (unsigned long long)n);
    return 0;
}

static int print_menu(dal_t *dal, const dal_query_opts_t *opts, long long poi)
{
    dal_value_t param = dal_int(poi);
    dal_result_t *r = NULL;
    dal_error_t err;
    int rc;

    if (dal_query(dal, opts, "SELECT name, price FROM wm_food WHERE wm_poi_id = ? ORDER BY name",
                  &param, 1, &r, &err) != 0) {
        fprintf(stderr, "select: %s\n", err.message);
        return -1;
    }
    while ((rc = dal_result_next(r, &err)) == 1)
        printf("  %-20s %8.2f\n", dal_result_text(r, 0, NULL), dal_result_double(r, 1));
    dal_result_free(r);
    return rc == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    dal_open_opts_t oo = {0};
    dal_query_opts_t qo = {0};
    dal_value_t shard;
    dal_error_t err;
    dal_t *dal = NULL;
    long long poi;
    int rc = 1;

    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: %s CONFIG POI_ID [NAME PRICE]\n", argv[0]);
        return 2;
    }
    poi = atoll(argv[2]);
    oo.log = log_line;
    oo.log_level = DAL_LOG_WARN;
    if (dal_open(argv[1], &oo, &dal, &err) != 0) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    shard = dal_int(poi);
    qo.shard_value = &shard;
    if (argc == 5 && add_dish(dal, &qo, poi, argv[3], argv[4]) != 0)
        goto done;
    printf("menu of shop %lld:\n", poi);
    if (print_menu(dal, &qo, poi) != 0)
        goto done;
    rc = 0;
done:
    dal_close(dal);
    return rc;
}
