/* Callgrind client requests for bench/overhead.py --instructions: count the
 * instructions of one measured run (instrumentation starts at the first
 * bench_begin, so imports run at near-native speed). Built with gcc at run time. */
#include <valgrind/callgrind.h>

void bench_begin(void) {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
}

void bench_end(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
