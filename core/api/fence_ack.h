/*
 * fence_ack.h -- each dal instance's registration with, and
 * acknowledgement of, a reshard's write fence (docs/resharding.md,
 * "switch").
 *
 * An instance that follows its configuration source (a watched file, a
 * store), from its first write on (that write waits for it: fence.c), has
 * a thread that looks at the configuration in force every 50 ms and
 * writes, for every table of it, a row of the table
 * dal_reshard_fence_ack on the datasource of the table's first physical
 * table: (table_name, instance, generation, seen).  `instance` is
 * "HOST:PID:START_MS"; `seen` the server's NOW(6), refreshed every
 * FENCE_ACK_BEAT_MS (the instance is live while it is recent); and
 * `generation` the write fence this instance has applied to the table (0:
 * none).  A fence is applied once the configuration carrying it is in
 * force and fence_drain has returned: every write of the table this
 * instance sends from then on is held.  Where dal_reshard_fence_ack does
 * not exist (`dal reshard copy` and `switch` create it) nothing is
 * written, and while no node has it the beat comes every
 * FENCE_ACK_ABSENT_MS instead (the switch waits that long after creating
 * it).
 */
#ifndef DAL_CORE_FENCE_ACK_H
#define DAL_CORE_FENCE_ACK_H

#include "dal/dal.h"

#define FENCE_ACK_BEAT_MS 1000
#define FENCE_ACK_ABSENT_MS 5000
/* A beat that wrote every row lets the instance write for this long from
 * the moment it began (fence.c waits past it): less than the time after
 * which the switch takes an instance for dead (3 s of the server's clock,
 * tools/reshard_ack.c), so an instance stopped or cut off long enough to
 * be passed over has stopped writing first, and reads the configuration
 * again before it writes on. */
#define FENCE_ACK_LEASE_MS 2500

struct dal_fence_acker;

/* Start dal's thread; *out owned (fence_ack_stop; NULL is fine). */
int fence_ack_start(dal_t *dal, struct dal_fence_acker **out, dal_error_t *err);
void fence_ack_stop(struct dal_fence_acker *a);

#endif /* DAL_CORE_FENCE_ACK_H */
