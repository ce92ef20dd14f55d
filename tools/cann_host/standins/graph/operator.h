/* Stand-in (tools/cann_host): included by opbase's tiling_context_to_json.h, which uses nothing of
 * it; the real header lives in CANN's graph repository, not in the snapshots. */
